import type { Config } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import { isTerminal } from '../fleet/record-status.js';
import type { Layout } from '../layout/layout.js';

/**
 * The part of a cancel that other hosts run (docs/design.md §17.7): on a `nats://` bus, the
 * target's descendants that another host runs — all of them with `tree`, else the foreground
 * ones — read from the fleet's records and cancelled there, each top-most one with
 * `flotilla cancel ID --tree` through its host's `hosts:` entry. Returns the ids those hosts
 * cancelled and one note per host that could not be asked; nothing on `maildir`.
 */
export async function cancelElsewhere(
  layout: Layout,
  config: Config,
  target: AgentRecord,
  opts: { tree?: boolean },
): Promise<{ cancelled: string[]; notes: string[] }> {
  if (config.fleet.bus === 'maildir') return { cancelled: [], notes: [] };
  const [{ busFor }, { selfHost }, { runRemoteFlotilla }] = await Promise.all([
    import('../bus/open.js'),
    import('../hosts/self.js'),
    import('../hosts/ssh.js'),
  ]);
  const here = selfHost(config.fleet);
  const all = await busFor(layout, config).records.list();
  const byId = new Map(all.map((r) => [r.id, r]));
  const below = (r: AgentRecord): boolean => {
    let at: AgentRecord | undefined = r;
    for (let steps = r.depth + 1; at?.parentId && steps >= 0; steps--) {
      if (!opts.tree && at.background) return false;
      if (at.parentId === target.id) return true;
      at = byId.get(at.parentId);
    }
    return false;
  };
  const far = all.filter((r) => r.host && r.host !== here && !isTerminal(r.status) && below(r));
  const farIds = new Set(far.map((r) => r.id));
  // Each top-most one: its host cancels what is below it.
  const tops = far.filter((r) => !r.parentId || !farIds.has(r.parentId));
  const cancelled: string[] = [];
  const notes: string[] = [];
  for (const rec of tops) {
    const entry = config.hosts[rec.host!];
    if (!entry) {
      notes.push(
        `${rec.id} runs on host ${rec.host}, which is not under hosts: in your config — add it, then cancel ${rec.id}`,
      );
      continue;
    }
    try {
      const r = await runRemoteFlotilla({ name: rec.host!, ...entry }, ['cancel', rec.id, '--tree', '--json']);
      if (r.exitCode !== 0) throw new Error(r.stderr.trim().split('\n').pop() || `exit ${r.exitCode}`);
      cancelled.push(...(JSON.parse(r.stdout) as { cancelled: string[] }).cancelled);
    } catch (err) {
      notes.push(`could not cancel ${rec.id} on host ${rec.host}: ${errorMessage(err)}`);
    }
  }
  return { cancelled, notes };
}
