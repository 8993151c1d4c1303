import { changeDir, type Cwd } from './paths.js';
import type { Word } from './words.js';

/**
 * The directory the later commands of a list run in (docs/security.md): `cd DIR`, `cd` alone
 * (HOME), `cd -`, `pushd DIR` and `popd` move it for the rest of the shell; subshells,
 * pipeline stages and substitutions get a copy (the analyzer restores it after them).
 * Whether a `cd` succeeded is not known: the commands after it are read in the new directory.
 */
export class DirState {
  constructor(
    public cwd: Cwd = undefined,
    /** `$OLDPWD`; `null` when unknown or unset. */
    private old: Cwd = null,
    private stack: Cwd[] = [],
  ) {}

  copy(): DirState {
    return new DirState(this.cwd, this.old, [...this.stack]);
  }

  /** Applies `cd`, `pushd` or `popd` with its arguments; anything else changes nothing. */
  apply(name: string, args: readonly Word[]): void {
    if (name !== 'cd' && name !== 'pushd' && name !== 'popd' && name !== 'chdir') return;
    // `-L`, `-P`, `-e`, `-@` (cd) and `-n` (pushd, popd) take no value.
    let k = 0;
    while (k < args.length && /^-[LPe@n]+$/.test(args[k]!.value ?? '')) k++;
    if (args[k]?.value === '--') k++;
    const dir = args[k];
    if (name === 'popd') {
      if (dir !== undefined) this.stack = this.stack.map(() => null);
      else this.move(this.stack.length ? this.stack.pop() : null);
      return;
    }
    if (name === 'pushd') {
      // `pushd` alone swaps the top two; `pushd +N` rotates: the gate does not follow.
      if (dir === undefined || /^[+-]\d+$/.test(dir.value ?? '')) return this.move(null);
      this.stack.push(this.cwd);
      return this.move(changeDir(this.cwd, dir));
    }
    if (dir?.value === '-') return this.move(this.old);
    this.move(changeDir(this.cwd, dir));
  }

  private move(to: Cwd): void {
    this.old = this.cwd;
    this.cwd = to;
  }
}
