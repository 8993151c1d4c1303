/**
 * Who may broadcast to whom (docs/design.md §4, "Broadcast"): a pure decision, like the rest
 * of policy. A broadcast reaches agents the sender could not name one by one without looking
 * them up, so its reach follows what the sender already works with:
 * - a person: any target;
 * - an agent: its own `children` and its own `tree` (the agents it works beside);
 *   `board:NAME` only when it is a member of that board (spawned for it, or created or claimed a task there);
 *   `all` (every tree) only when a person's config says agents may (`inbox.broadcast_all: agents`).
 */

export type BroadcastScope = 'children' | 'tree' | 'board' | 'all';

export interface BroadcastAsk {
  /** An agent id, or `human`. */
  sender: string;
  scope: BroadcastScope;
  board?: string;
  /** The sender is a member of `board`: spawned for it, or created or claimed a task there. */
  onBoard?: boolean;
  /** `inbox.broadcast_all`. */
  allWho: 'people' | 'agents';
}

export type BroadcastDecision =
  { decision: 'allow'; rule: string } | { decision: 'deny'; rule: string; reason: string };

export function decideBroadcast(ask: BroadcastAsk): BroadcastDecision {
  if (ask.sender === 'human') return { decision: 'allow', rule: 'person' };
  switch (ask.scope) {
    case 'children':
    case 'tree':
      return { decision: 'allow', rule: 'own-tree' };
    case 'board':
      return ask.onBoard
        ? { decision: 'allow', rule: 'board-member' }
        : {
            decision: 'deny',
            rule: 'board-member',
            reason: `refused: ${ask.sender} has no part in board '${ask.board ?? '?'}' (not spawned for it, and it created or claimed none of its tasks), so it may not broadcast to it — claim or add a task there first, or send to its agents by id`,
          };
    case 'all':
      return ask.allWho === 'agents'
        ? { decision: 'allow', rule: 'inbox.broadcast_all' }
        : {
            decision: 'deny',
            rule: 'inbox.broadcast_all',
            reason: `refused: only a person may broadcast to all agents (inbox.broadcast_all: people) — send to 'tree' or 'children', or ask a person`,
          };
  }
}
