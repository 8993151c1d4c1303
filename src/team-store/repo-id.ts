import { createHash } from 'node:crypto';
import { selfHost } from '../hosts/self.js';
import type { Config } from '../config/schema.js';

/**
 * A repository's identity across hosts (docs/decisions-hosts.md "One board and one set of leases on
 * the bus"): its root commit — the hash of the first commit of its history, which every clone
 * and worktree of it has, whatever it is called, wherever it sits and whichever remote URL it
 * was cloned from (ssh or https, a mirror, a fork, none). With several roots (histories merged
 * together) the smallest hash; every clone that has the merge has them all. A folder in no
 * repository, or one with no commit yet, is this host's own: the host and the path.
 */
const cache = new Map<string, string>();

export function repoIdentity(checkout: string, fleet: Pick<Config['fleet'], 'host'>): string {
  const hit = cache.get(checkout);
  if (hit !== undefined) return hit;
  let id: string;
  try {
    // node:child_process loaded on first use: `status` on a bus loads this module but never asks (~4 ms of CPU, §14).
    const roots = process
      .getBuiltinModule('node:child_process')
      .execFileSync('git', ['-c', 'core.fsmonitor=false', 'rev-list', '--max-parents=0', 'HEAD'], {
        cwd: checkout,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
      })
      .split('\n')
      .filter((l) => /^[0-9a-f]{40,64}$/.test(l))
      .sort();
    id = roots[0] ?? local(checkout, fleet);
  } catch {
    id = local(checkout, fleet);
  }
  cache.set(checkout, id);
  return id;
}

function local(checkout: string, fleet: Pick<Config['fleet'], 'host'>): string {
  return `path-${createHash('sha256')
    .update(`${selfHost(fleet)}\0${checkout}`)
    .digest('hex')
    .slice(0, 24)}`;
}
