import { steadyMs } from '../bus/steady.js';
import { audit } from '../audit/audit.js';
import type { Bus, HostBeat, LostMark } from '../bus/types.js';
import { isTerminal } from '../fleet/record-status.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { completionDraft } from './completion.js';

/** What the harness of an agent the fleet marked lost ends with once its host is heard again (§17.8). */
export const MARKED_LOST_REASON = 'marked lost while its host was unreachable';

/** Why an agent is lost, as its record, its parent's completion and `status` say it. */
export function lostReason(beat: Pick<HostBeat, 'host' | 'ageMs'>): string {
  return `host ${beat.host}: no heartbeat for ${Math.round((beat.ageMs ?? 0) / 1000)} s`;
}

/**
 * Faults are data (§17.8): every live agent of a host whose heartbeat is older than its
 * `lost_after_secs` is marked `lost` on the bus. Any live process of another host may call
 * this (the one that beats, and `flotilla status`); the record's revision check lets exactly
 * one of them win each agent, and only the winner tells the agent's parent — the completion
 * the parent would have got, taken under the fleet-wide once-marker of that task, so a real
 * completion from the agent's host and this notice never both go out. Returns the agents this
 * call marked. A bus that cannot be read marks nothing: the next beat looks again. `beats`: the
 * hosts' heartbeats when the caller has read them already (status reads them once).
 */
export async function markLostHosts(
  layout: Layout,
  bus: Bus,
  beats: Promise<HostBeat[]> = bus.records.hosts(),
): Promise<AgentRecord[]> {
  if (bus.kind !== 'nats') return [];
  let silent: Map<string, HostBeat>;
  try {
    // Silent while this host heard the bus throughout (bus/steady.ts): a bus outage is no host's silence.
    const steady = steadyMs(layout);
    silent = new Map((await beats).filter((b) => b.lost && !b.self && steady >= b.lostAfterMs).map((b) => [b.host, b]));
  } catch {
    return [];
  }
  if (silent.size === 0) return [];
  const marked: AgentRecord[] = [];
  // Live records only: the ended history is never read here (docs/decisions-hosts.md "Records on the bus").
  let live: AgentRecord[];
  try {
    live = await bus.records.live();
  } catch {
    return [];
  }
  for (const rec of live) {
    const beat = rec.host ? silent.get(rec.host) : undefined;
    if (!beat || isTerminal(rec.status)) continue;
    const mark = await bus.records.markLost(rec.id, () => lostReason(beat));
    if (!mark) continue;
    marked.push(mark.rec);
    await tellLost(layout, bus, mark);
  }
  return marked;
}

/**
 * The winner's notice: one completion with status `lost` to the parent (the person's inbox for a root), and the audit
 * line.
 */
async function tellLost(layout: Layout, bus: Bus, { rec, claim }: LostMark): Promise<void> {
  const result = rec.lastTask!;
  const to = rec.parentId ?? 'human';
  let told = false;
  if (claim === 'won') {
    const { draft, options } = completionDraft(rec, result, to);
    try {
      await bus.mail.deliver(draft, options);
      told = true;
    } catch {
      // Kept in this host's outbox when the bus is away (§18.1); anything else is in the audit line.
    }
  }
  audit(layout, {
    event: 'agent_lost',
    agent: rec.id,
    agent_host: rec.host,
    to,
    reason: rec.exitReason,
    task: result.task,
    told,
    ...(claim === 'won' ? {} : { marker: claim }),
  });
}
