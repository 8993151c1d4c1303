import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { leaseLapsed } from './lapse.js';
import type { Lease } from './lease.js';
import { checkoutTop, repositoryTop } from './checkout.js';
import { pathsOverlap } from './match.js';
import { readLeaseFile } from './store.js';

/**
 * `flotilla lease check --staged` (docs/design.md §16), for a git pre-commit hook: the staged
 * files of this checkout that another holder's lease covers, one line each naming the holder.
 * Reads only; a commit is the committer's own act, so nothing is taken. `holding` reads the
 * leases of the checkout's repository that hold now: this host's lease file by default, the
 * fleet's LEASES bucket on a bus (team-store/leases.ts).
 */
export async function stagedConflicts(
  layout: Layout,
  by: string,
  cwd: string,
  holding: (checkout: string) => Promise<Lease[]> = async (checkout) => {
    const now = Date.now();
    return readLeaseFile(layout, checkout).leases.filter((l) => !leaseLapsed(layout, l, now));
  },
): Promise<string[]> {
  const top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd, encoding: 'utf8' }).trim();
  const staged = execFileSync('git', ['diff', '--cached', '--name-only', '-z'], { cwd: top, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  const checkout = repositoryTop(checkoutTop(top));
  const leases = staged.length === 0 ? [] : await holding(checkout);
  const out: string[] = [];
  for (const rel of staged) {
    const held = leases.find((l) => l.holder !== by && pathsOverlap(l.path, rel));
    if (held)
      out.push(
        `${join(top, rel)} is leased to ${held.holder} since ${held.taken_at} for "${held.why}" — ask ${held.holder} (flotilla send ${held.holder} …), wait, or unstage it`,
      );
  }
  return out;
}
