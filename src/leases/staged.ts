import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { leaseLapsed } from './lapse.js';
import { checkoutTop, repositoryTop } from './checkout.js';
import { pathsOverlap } from './match.js';
import { readLeaseFile } from './store.js';

/**
 * `flotilla lease check --staged` (docs/design.md §16), for a git pre-commit hook: the staged
 * files of this checkout that another holder's lease covers, one line each naming the holder.
 * Reads only; a commit is the committer's own act, so nothing is taken.
 */
export async function stagedConflicts(layout: Layout, by: string, cwd: string): Promise<string[]> {
  const top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd, encoding: 'utf8' }).trim();
  const staged = execFileSync('git', ['diff', '--cached', '--name-only', '-z'], { cwd: top, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  const checkout = repositoryTop(checkoutTop(top));
  const file = readLeaseFile(layout, checkout);
  const now = Date.now();
  const out: string[] = [];
  for (const rel of staged) {
    const held = file.leases.find((l) => l.holder !== by && pathsOverlap(l.path, rel) && !leaseLapsed(layout, l, now));
    if (held)
      out.push(
        `${join(top, rel)} is leased to ${held.holder} since ${held.taken_at} for "${held.why}" — ask ${held.holder} (flotilla send ${held.holder} …), wait, or unstage it`,
      );
  }
  return out;
}
