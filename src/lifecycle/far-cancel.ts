import { audit } from '../audit/audit.js';
import type { Config } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import { isTerminal } from '../fleet/record-status.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';

/**
 * The part of a cancel, and of any agent's ending, that other hosts run (docs/design.md §5.8,
 * §17.7): on a `nats://` bus, the target's live descendants that another host runs — all of
 * them with `tree`, else the ones below it through foreground links only — read from the
 * tree's records on the bus, and each top-most one cancelled on its host with
 * `flotilla cancel ID` (`--tree` with `tree`) through its `hosts:` entry. Loaded only on a bus.
 */

/**
 * What a cancel reached, and one line per part it could not reach (a host not under `hosts:`, a bus that did not
 * answer).
 */
export interface CancelResult {
  cancelled: string[];
  notes: string[];
}

/** The target's live descendants on other hosts that a cancel of it reaches. */
export async function farDescendants(
  layout: Layout,
  config: Config,
  target: AgentRecord,
  opts: { tree?: boolean | undefined },
): Promise<{ records: AgentRecord[]; notes: string[] }> {
  const [{ busFor }, { selfHost }] = await Promise.all([import('../bus/open.js'), import('../hosts/self.js')]);
  const here = selfHost(config.fleet);
  const records = busFor(layout, config).records;
  let live: AgentRecord[];
  try {
    // The tree's live records on the other hosts only: the cost grows with the tree, not the fleet's past.
    live = (await records.tree(target.rootId)).live;
  } catch (err) {
    return { records: [], notes: [`could not read the fleet's records on the bus: ${errorMessage(err)}`] };
  }
  const byId = new Map(live.map((r) => [r.id, r]));
  // A parent in between is this host's record, or one the bus still has (an ended one).
  const parentOf = async (r: AgentRecord): Promise<AgentRecord | undefined> => {
    const id = r.parentId!;
    return byId.get(id) ?? readRecord(layout, id) ?? (await records.get(id));
  };
  const below = async (r: AgentRecord): Promise<boolean> => {
    let at: AgentRecord | undefined = r;
    for (let steps = r.depth + 1; at?.parentId && steps >= 0; steps--) {
      if (!opts.tree && at.background) return false;
      if (at.parentId === target.id) return true;
      at = await parentOf(at);
    }
    return false;
  };
  const far: AgentRecord[] = [];
  for (const r of live) {
    if (r.host && r.host !== here && !isTerminal(r.status) && (await below(r))) far.push(r);
  }
  return { records: far, notes: [] };
}

/**
 * Cancels `far` (from farDescendants) on their hosts: each top-most one is `flotilla cancel`
 * there, which ends what is below it on that host and asks further hosts in turn; one that
 * has ended meanwhile (a parent's ending reached it first) is not asked again. Returns the
 * far ids that were live and are ended now, and the ids each host said it cancelled.
 */
export async function cancelFar(
  layout: Layout,
  config: Config,
  far: readonly AgentRecord[],
  opts: { tree?: boolean | undefined; by: string },
): Promise<CancelResult> {
  if (far.length === 0) return { cancelled: [], notes: [] };
  const [{ busFor }, { runRemoteFlotilla }] = await Promise.all([import('../bus/open.js'), import('../hosts/ssh.js')]);
  const records = busFor(layout, config).records;
  const farById = new Map(far.map((r) => [r.id, r]));
  const topOf = (r: AgentRecord): AgentRecord => {
    let at = r;
    for (let p = farById.get(at.parentId ?? ''); p && p !== r; p = farById.get(at.parentId ?? '')) at = p;
    return at;
  };
  const tops = far.filter((r) => topOf(r) === r);
  const reported: string[] = [];
  const unreached = new Set<string>();
  const notes: string[] = [];
  for (const rec of tops) {
    const now = await records.get(rec.id);
    if (now && isTerminal(now.status)) continue;
    const entry = config.hosts[rec.host!];
    if (!entry) {
      unreached.add(rec.id);
      notes.push(
        `${rec.id} runs on host ${rec.host}, which is not under hosts: in your config — add it, then cancel ${rec.id}`,
      );
      continue;
    }
    try {
      const args = ['cancel', rec.id, ...(opts.tree ? ['--tree'] : []), '--json'];
      const r = await runRemoteFlotilla({ name: rec.host!, ...entry }, args);
      if (r.exitCode !== 0) throw new Error(r.stderr.trim().split('\n').pop() || `exit ${r.exitCode}`);
      reported.push(...(JSON.parse(r.stdout) as { cancelled: string[] }).cancelled);
      audit(layout, { event: 'cancel', agent: rec.id, by: opts.by, host: rec.host, tree: !!opts.tree });
    } catch (err) {
      unreached.add(rec.id);
      notes.push(`could not cancel ${rec.id} on host ${rec.host}: ${errorMessage(err)}`);
    }
  }
  const reached = far.filter((r) => !unreached.has(topOf(r).id)).map((r) => r.id);
  return { cancelled: [...new Set([...reached, ...reported])], notes };
}

/**
 * An agent's ending reaches its foreground children on other hosts as SIGTERM reaches its
 * local ones (§5.8): the harness's own ending and the reaper's both call this. Never throws.
 */
export async function cancelFarChildren(layout: Layout, config: Config, rec: AgentRecord): Promise<CancelResult> {
  try {
    const found = await farDescendants(layout, config, rec, { tree: false });
    const done = await cancelFar(layout, config, found.records, { by: rec.id });
    return { cancelled: done.cancelled, notes: [...found.notes, ...done.notes] };
  } catch (err) {
    return { cancelled: [], notes: [`could not cancel ${rec.id}'s children on other hosts: ${errorMessage(err)}`] };
  }
}
