import { contextOf, noFleetLine, type Globals } from '../context.js';
import { writeOut } from '../output.js';
import type { ReviewRow } from '../../work/review.js';
import type { Layout } from '../../layout/layout.js';
import type { CommandSpec, Parsed } from '../spec.js';

/** A row of this host's work, or (`host`) of another host's, as that host reviews it. */
type Row = ReviewRow & { host?: string };

/** `flotilla review` (§12): the work finished and idle agents left on their branches. On the fast path (fast.ts). */
export const spec: CommandSpec = {
  name: 'review',
  fast: true,
  description:
    'list finished and idle agents with work on their branches: commits ahead, files changed, conflicts with the base branch, leases held',
  args: [],
  options: [
    { flags: '--json', description: 'print the rows as JSON' },
    { flags: '--here', description: "only this host's agents (on a nats:// bus, other hosts' are asked over ssh)" },
  ],
};

export async function run(parsed: Parsed, globals: Globals): Promise<void> {
  const opts = parsed.opts as { json?: boolean; here?: boolean };
  // A read-only look never makes a fleet root (it would show up in the person's checkout).
  const { layout } = contextOf(globals, { createState: false });
  const [{ listRecords }, { reviewWork }] = await Promise.all([
    import('../../fleet/registry.js'),
    import('../../work/review.js'),
  ]);
  const mine = noFleetLine(layout) ? [] : await reviewWork(layout, listRecords(layout));
  const far = noFleetLine(layout) || opts.here ? { rows: [], notes: [] } : await farRows(layout);
  const rows: Row[] = [...mine, ...far.rows];
  if (opts.json) return writeOut(JSON.stringify(rows, null, 2) + '\n');
  for (const n of far.notes) writeOut(`${n}\n`);
  if (rows.length === 0)
    return writeOut(
      'no agent has work waiting: worktree agents that finished or are idle with commits or uncommitted files show here\n',
    );
  for (const r of rows) {
    const head = `${r.id}${r.host ? ` on ${r.host}` : ''} (${r.status})  ${r.branch} → ${r.base ?? '(detached)'}  ${r.ahead} ahead, ${r.behind} behind, ${r.files.length} file${r.files.length === 1 ? '' : 's'}`;
    const notes = [
      r.uncommitted ? `${r.uncommitted} uncommitted` : '',
      r.conflicts.length ? `CONFLICTS: ${r.conflicts.join(', ')}` : r.ahead ? 'merges cleanly' : '',
      r.leases.length ? `leases: ${r.leases.join(', ')}` : '',
    ].filter(Boolean);
    writeOut(`${head}${notes.length ? `  — ${notes.join('; ')}` : ''}\n`);
  }
}

/**
 * On a `nats://` bus, the work other hosts' agents left (§17.7): each host with a finished or
 * idle worktree agent on the bus is asked for its own `flotilla review --json` through its
 * `hosts:` entry, so its rows are as that host sees them (`flotilla merge ID` brings one here).
 * A host that cannot be asked is one note, and the review goes on.
 */
async function farRows(layout: Layout): Promise<{ rows: Row[]; notes: string[] }> {
  const { cliConfig } = await import('../context.js');
  const { config } = await cliConfig(layout);
  if (config.fleet.bus === 'maildir') return { rows: [], notes: [] };
  const [{ busFor }, { selfHost }, { isTerminal }, { runRemoteFlotilla }, { errorMessage }] = await Promise.all([
    import('../../bus/open.js'),
    import('../../hosts/self.js'),
    import('../../fleet/record-status.js'),
    import('../../hosts/ssh.js'),
    import('../../errors.js'),
  ]);
  const here = selfHost(config.fleet);
  const records = await busFor(layout, config).records.list();
  const hosts = new Set(
    records
      .filter((r) => r.host && r.host !== here && r.worktree && (r.status === 'idle' || isTerminal(r.status)))
      .map((r) => r.host!),
  );
  const rows: Row[] = [];
  const notes: string[] = [];
  for (const name of [...hosts].sort()) {
    const entry = config.hosts[name];
    if (!entry) {
      notes.push(
        `host ${name} has agents with work, but is not under hosts: in your config — add it to review them here`,
      );
      continue;
    }
    try {
      const r = await runRemoteFlotilla({ name, ...entry }, ['review', '--json', '--here']);
      if (r.exitCode !== 0) throw new Error(r.stderr.trim().split('\n').pop() || `exit ${r.exitCode}`);
      for (const row of JSON.parse(r.stdout) as Row[]) if (!row.host) rows.push({ ...row, host: name });
    } catch (err) {
      notes.push(`host ${name}: cannot review its agents' work: ${errorMessage(err)}`);
    }
  }
  return { rows, notes };
}
