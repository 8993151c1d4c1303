import { FlotillaError } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Host } from '../hosts/ssh.js';
import type { Layout } from '../layout/layout.js';
import { shellQuote } from '../tmux/quote.js';
import { git, gitWhy } from './git.js';
import { branchOf } from './work.js';

/**
 * The branch of an agent another host runs, brought into this checkout (docs/design.md
 * §17.7, §12): `flotilla merge ID` of such an agent fetches `flotilla/ID` from its worktree
 * there through git's own ssh transport — with the host's ssh options, BatchMode and port, as
 * its one ssh line has them — into the branch of that name here; the merge is then the one
 * an agent of this host gets. Throws one line when it has no branch or the fetch fails.
 */
export async function fetchFarBranch(layout: Layout, host: Host, rec: AgentRecord): Promise<void> {
  if (!rec.worktree) {
    throw new FlotillaError(
      `${rec.id} worked in place on host '${host.name}' (${rec.cwd}): it has no branch to bring here — its changes are uncommitted in that checkout there`,
      { code: 'no-branch' },
    );
  }
  const branch = branchOf(rec.id);
  const r = await git(
    layout.project,
    ['fetch', '--quiet', '--no-tags', `${host.ssh}:${rec.worktree}`, `+refs/heads/${branch}:refs/heads/${branch}`],
    { ...process.env, GIT_SSH_COMMAND: sshCommand(host) },
  );
  if (r.code !== 0) {
    throw new FlotillaError(
      `cannot bring ${branch} of ${rec.id} from host '${host.name}': ${gitWhy(r)} — check that 'ssh -o BatchMode=yes ${host.ssh} true' works and git is installed there`,
      { code: 'host-fetch' },
    );
  }
}

/** git's ssh line for `host`: its ssh options, BatchMode and port, as its one ssh line has them. */
function sshCommand(host: Host): string {
  return [
    'ssh',
    '-o',
    'BatchMode=yes',
    '-o',
    `ConnectTimeout=${host.connect_timeout_secs}`,
    ...(host.port ? ['-p', String(host.port)] : []),
    ...host.ssh_options,
  ]
    .map(shellQuote)
    .join(' ');
}

/**
 * After `flotilla merge ID` of another host's agent merged it here: that host's repository is
 * told, as `refs/flotilla/merged/ID` at the branch tip merged (a commit it has already), so its
 * own `flotilla gc` removes the worktree and branch whose work is merged — unless the branch
 * has moved on since (§12). Returns one line when it could not be told; the merge stands.
 */
export async function markMergedThere(layout: Layout, host: Host, rec: AgentRecord): Promise<string | null> {
  const branch = branchOf(rec.id);
  const r = await git(
    layout.project,
    ['push', '--quiet', '--force', `${host.ssh}:${rec.worktree}`, `refs/heads/${branch}:${mergedRef(rec.id)}`],
    { ...process.env, GIT_SSH_COMMAND: sshCommand(host) },
  );
  return r.code === 0
    ? null
    : `merged, but host '${host.name}' could not be told (${gitWhy(r)}) — its flotilla gc keeps ${branch} until 'flotilla gc --force' there`;
}

/** Where a host's repository hears that agent `id`'s branch was merged on another host. */
export function mergedRef(id: string): string {
  return `refs/flotilla/merged/${id}`;
}
