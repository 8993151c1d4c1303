import { audit } from '../audit/audit.js';
import { FlotillaError, refusal, UsageError } from '../errors.js';
import { targetName, type BroadcastTarget } from '../inbox/address.js';
import { newSortableId } from '../fleet/ids.js';
import { liveRecords } from '../fleet/live.js';
import type { AgentRecord } from '../fleet/record.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { decideBroadcast } from '../policy/broadcast.js';
import { allIds, readTask } from '../tasks/store.js';
import { fleetBus } from '../bus/settings.js';
import type { InboxMessage, MessageDraft } from '../inbox/message.js';
import { checkBoardName } from '../tasks/task.js';

/**
 * Broadcast (docs/design.md §4, "Broadcast"): one message to a group — `children`, `tree`,
 * `board:NAME`, `all` — as one copy per recipient, each an ordinary delivery (own id, own
 * file, crash-safe as any send), all carrying one `broadcast_id`. Every door (`flotilla
 * send`, `send_message`, `flotilla mcp`) comes here, with the sender's identity found the
 * way a send finds it; the sender's policy (policy/broadcast.ts) decides first.
 */

/**
 * A board's members: the agents spawned for it (`--board NAME` or a definition's `board:`, on
 * their record) and the agents that created or claimed a task on it, or had a claim on it (its
 * notes). An agent on the fleet's default board (no board named) is not a member of `fleet`
 * by that alone: that would make `board:fleet` a way around `all`'s policy.
 */
export function boardMembers(layout: Layout, name: string, live: AgentRecord[] = liveRecords(layout)): Set<string> {
  const board = layout.board(name);
  const out = new Set<string>(live.filter((r) => r.board === name).map((r) => r.id));
  for (const id of allIds(board)) {
    const task = readTask(board, id);
    if (!task) continue;
    out.add(task.created_by);
    if (task.claimed_by) out.add(task.claimed_by);
    for (const n of task.notes) out.add(n.by);
  }
  out.delete('human');
  return out;
}

/**
 * Who a broadcast reaches: the agents of the group that have not ended (a live one reads it
 * now; one that died and is not yet reaped finds it when resumed), never the sender, each
 * once. A finished agent gets no copy: nobody would read it (send to it by id to leave it mail).
 */
export function broadcastRecipients(
  layout: Layout,
  sender: string,
  target: BroadcastTarget,
  members?: Set<string>,
): string[] {
  const live = liveRecords(layout);
  let group: AgentRecord[];
  if (target.scope === 'all') group = live;
  else if (target.scope === 'board') {
    const on = members ?? boardMembers(layout, target.board!);
    group = live.filter((r) => on.has(r.id));
  } else if (sender === 'human') {
    // A person's children are the roots they started; a person's tree is every tree.
    group = target.scope === 'children' ? live.filter((r) => r.parentId === null) : live;
  } else if (target.scope === 'children') {
    group = live.filter((r) => r.parentId === sender);
  } else {
    const me = readRecord(layout, sender);
    if (!me)
      throw new FlotillaError(
        `cannot resolve 'tree': the sender '${sender}' has no registry record — name the recipients' ids instead`,
        { code: 'not-found' },
      );
    group = live.filter((r) => r.rootId === me.rootId);
  }
  return [...new Set(group.map((r) => r.id))].filter((id) => id !== sender);
}

export interface BroadcastResult {
  broadcastId: string;
  target: string;
  /** One delivered copy per recipient, in delivery order. */
  copies: InboxMessage[];
}

export interface BroadcastOptions {
  maxBodyBytes: number;
  /** `inbox.broadcast_all`. */
  allWho: 'people' | 'agents';
}

/**
 * Sends one copy to each recipient. The sender's policy is checked once, before anything is
 * written; an empty group is an error (exit 1), never a silent no-op. A copy that cannot be
 * delivered does not stop the others: the error names who missed it, after the rest went.
 */
export async function broadcast(
  layout: Layout,
  draft: Omit<MessageDraft, 'to' | 'id'>,
  target: BroadcastTarget,
  opts: BroadcastOptions,
): Promise<BroadcastResult> {
  const sender = draft.from;
  if (target.board !== undefined) checkBoardName(target.board);
  const name = targetName(target);
  const members = target.scope === 'board' ? boardMembers(layout, target.board!) : undefined;
  const verdict = decideBroadcast({
    sender,
    scope: target.scope,
    allWho: opts.allWho,
    ...(target.board ? { board: target.board, onBoard: members!.has(sender) } : {}),
  });
  if (verdict.decision === 'deny') {
    audit(layout, { event: 'policy_denied', agent: sender, tool: 'send_message', target: name, rule: verdict.rule });
    throw refusal('broadcast-refused', verdict.reason, { target: name, rule: verdict.rule });
  }
  const recipients = broadcastRecipients(layout, sender, target, members);
  if (recipients.length === 0) {
    throw new FlotillaError(
      `no one to broadcast to: '${name}' has no running agent besides the sender — 'flotilla status' lists the agents`,
      { code: 'no-recipients' },
    );
  }
  const broadcastId = newSortableId();
  const now = Date.now();
  audit(layout, {
    event: 'broadcast',
    agent: sender,
    broadcast_id: broadcastId,
    target: name,
    recipients: recipients.length,
    rule: verdict.rule,
  });
  const copies: InboxMessage[] = [];
  const missed: string[] = [];
  const { mail } = await fleetBus(layout);
  for (const to of recipients) {
    try {
      // One timestamp for every copy: they are one message.
      const d = await mail.deliver({ ...draft, to, broadcast_id: broadcastId } as MessageDraft, {
        maxBodyBytes: opts.maxBodyBytes,
        now,
      });
      copies.push(d.message);
    } catch (err) {
      if (err instanceof UsageError || (err instanceof FlotillaError && err.code === 'message-too-large')) throw err;
      missed.push(to);
    }
  }
  if (missed.length > 0) {
    throw new FlotillaError(
      `broadcast ${broadcastId} reached ${copies.length} of ${recipients.length} agents; not delivered to ${missed.join(', ')} — send to them by id`,
      { code: 'broadcast-partial' },
    );
  }
  return { broadcastId, target: name, copies };
}
