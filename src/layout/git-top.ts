import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Whether `dir` is the top of a real git checkout: its `.git` is a git dir (a folder holding
 * `HEAD`) or a worktree's or submodule's `.git` file (`gitdir: …`). An empty `.git` folder is
 * not one: Codex's sandbox makes one as a mount point at the top of each writable root (`/tmp`
 * among them), and taking `/tmp` for the project sent a spawn to `/tmp/.flotilla` for its
 * definitions.
 */
export function isCheckoutTop(dir: string): boolean {
  const dotGit = join(dir, '.git');
  const st = statSync(dotGit, { throwIfNoEntry: false });
  if (!st) return false;
  if (st.isDirectory()) return statSync(join(dotGit, 'HEAD'), { throwIfNoEntry: false })?.isFile() === true;
  if (!st.isFile()) return false;
  try {
    return /^gitdir:\s*\S/.test(readFileSync(dotGit, 'utf8'));
  } catch {
    return false;
  }
}
