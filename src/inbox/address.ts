import { existsSync } from 'node:fs';
import { FlotillaError, refusal, UsageError } from '../errors.js';
import { findParentAgent } from '../fleet/lineage.js';
import { ID_PATTERN, resolvePrefix } from '../fleet/ids.js';
import { listIds, readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import type { BroadcastScope } from '../policy/broadcast.js';

/** A group a broadcast goes to (§4, "Broadcast"): `board:NAME` names its board. */
export interface BroadcastTarget {
  scope: BroadcastScope;
  board?: string;
}

/** `children`, `tree`, `all`, `board:NAME` → a target; anything else (an agent id, `parent`, …) → null. */
export function parseBroadcastTarget(to: string): BroadcastTarget | null {
  const t = to.trim();
  if (t === 'children' || t === 'tree' || t === 'all') return { scope: t };
  if (t.startsWith('board:')) {
    const name = t.slice('board:'.length);
    if (!name) throw new UsageError('board: needs a board name, e.g. --to board:backend');
    // The name is checked where the board is read (lifecycle/broadcast.ts).
    return { scope: 'board', board: name };
  }
  return null;
}

export function targetName(t: BroadcastTarget): string {
  return t.scope === 'board' ? `board:${t.board ?? ''}` : t.scope;
}

/**
 * Who is sending (§4): the agent among this process's ancestors (§5.1, as approvals and
 * spawns find it), else a person (`human`). `FLOTILLA_AGENT_ID` is only a hint: naming an
 * agent that is not an ancestor is refused as forged, and unsetting it changes nothing. So
 * `from` cannot be chosen by whoever writes the message, nor by the sender's environment.
 */
/** Why an agent may not send `kind: system` (docs/security-fleet.md "Framing"). */
export const SYSTEM_KIND_REFUSAL =
  "refused: kind 'system' is Flotilla's own, and this message comes from an agent — send it as an ordinary message (drop --kind system)";

export function senderIdentity(layout: Layout, opts: { env?: NodeJS.ProcessEnv; pid?: number } = {}): string {
  const env = opts.env ?? process.env;
  const id = env.FLOTILLA_AGENT_ID?.trim();
  if (id && !ID_PATTERN.test(id)) {
    throw new FlotillaError(`FLOTILLA_AGENT_ID '${id}' is not a valid agent id — unset it to send as 'human'`, {
      code: 'bad-identity',
    });
  }
  const lineage = findParentAgent(layout, { env, ...(opts.pid === undefined ? {} : { pid: opts.pid }) });
  if (lineage.forged) {
    const real = lineage.parent ? `agent '${lineage.parent.id}'` : 'a person';
    throw refusal(
      'forged-sender',
      `refused: FLOTILLA_AGENT_ID names '${lineage.forged}', but this process belongs to ${real} — unset it (env -u FLOTILLA_AGENT_ID); mail is always sent as who you are`,
      { id: lineage.forged },
    );
  }
  return lineage.parent?.id ?? 'human';
}

/**
 * Resolves a recipient to an inbox owner: `human`; `parent` and `root` from the sender's
 * registry record (the parent of a root is `human`); otherwise an agent id or a unique
 * prefix of one. Finished agents are valid recipients (their mail shows as unread).
 * An unknown recipient is an error, so nothing is ever written to a made-up inbox.
 */
export function resolveRecipient(layout: Layout, to: string, sender: string): string {
  const target = to.trim();
  if (target === 'human') return 'human';
  if (target === 'parent' || target === 'root') {
    if (sender === 'human') {
      throw new UsageError(
        `'${target}' means the sender's ${target}, and a person sending from a shell has none — name an agent id or 'human'`,
      );
    }
    const rec = readRecord(layout, sender);
    if (!rec) {
      throw new FlotillaError(
        `cannot resolve '${target}': the sender '${sender}' has no registry record — name the recipient's id instead`,
        { code: 'not-found' },
      );
    }
    if (target === 'parent') return rec.parentId ?? 'human';
    return rec.rootId;
  }
  if (parseBroadcastTarget(target))
    throw new UsageError(
      `'${target}' is a group: it takes a broadcast (flotilla send --to ${target}), not one delivery`,
    );
  if (!target) throw new UsageError("no recipient given — name an agent id (or prefix), 'human', 'parent' or 'root'");
  // A whole id (what agents send to) is one stat, however many records the fleet keeps.
  if (ID_PATTERN.test(target) && existsSync(layout.registryFile(target))) return target;
  try {
    return resolvePrefix(target, listIds(layout));
  } catch (err) {
    if (err instanceof FlotillaError && err.code === 'not-found') {
      throw new FlotillaError(
        `unknown recipient '${target}': no agent id starts with it — run 'flotilla status' to list agents, or send to 'human', 'parent' or 'root'`,
        { code: 'unknown-recipient' },
      );
    }
    throw err;
  }
}
