import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The shapes of home a test starts from (docs/security.md, the sandbox's
 * "Read-only again"): `pristine`, nothing in it, as on a new machine; `linked`, the dot-folders
 * a person's dotfiles manager makes, each a link to a folder elsewhere; `read-only`, those
 * dot-folders present but not writable (a managed or shared home). Nothing of the person
 * running the tests is read.
 */
export type HomeKind = 'pristine' | 'linked' | 'read-only';

export const HOME_KINDS: readonly HomeKind[] = ['pristine', 'linked', 'read-only'];

/** The dot-folders a `linked` or `read-only` home has: the vendor CLIs', Flotilla's, the XDG ones. */
const DOT_FOLDERS = ['.claude', '.codex', '.gemini', '.flotilla', '.cache', '.local'];

const ROOT = fileURLToPath(new URL('../../.test-homes/', import.meta.url));

export interface TestHome {
  dir: string;
  kind: HomeKind;
  cleanup(): void;
}

/**
 * A fresh home in the repository's `.test-homes/` (gitignored): outside /tmp, as a real home
 * is, so nothing that hides /tmp hides it. `kind` defaults to `$FLOTILLA_TEST_HOME` or
 * `pristine`; the folder's name holds "flotilla" (`trustProject` checks that). `.config`
 * stays a plain folder in every kind: `flotilla trust`, the person's act, writes there.
 */
export function testHome(
  kind: HomeKind = (process.env.FLOTILLA_TEST_HOME as HomeKind | undefined) ?? 'pristine',
): TestHome {
  if (!HOME_KINDS.includes(kind)) throw new Error(`FLOTILLA_TEST_HOME is ${kind}: use one of ${HOME_KINDS.join(', ')}`);
  mkdirSync(ROOT, { recursive: true });
  const base = mkdtempSync(join(ROOT, 'flotilla-'));
  const dir = join(base, 'home');
  mkdirSync(dir, { mode: 0o700 });
  if (kind === 'linked') {
    for (const d of DOT_FOLDERS) {
      const target = join(base, 'dotfiles', d.slice(1));
      mkdirSync(target, { recursive: true });
      symlinkSync(target, join(dir, d));
    }
  } else if (kind === 'read-only') {
    for (const d of DOT_FOLDERS) mkdirSync(join(dir, d), { mode: 0o555 });
  }
  return {
    dir,
    kind,
    cleanup() {
      if (kind === 'read-only')
        for (const d of readdirSync(dir)) if (DOT_FOLDERS.includes(d)) chmodSync(join(dir, d), 0o755);
      removePatiently(base, () => undefined);
    },
  };
}

/**
 * Removes a directory that processes of the fleet may still be writing into (a harness
 * finishing after tmux was killed, a reaper run by a pane-died hook, a CLI writing its code
 * cache as it exits): stop them, retry for up to 10 s. `rmSync`'s own `maxRetries` retries
 * only the last `rmdir`, never listing again, so a file made after the listing fails it.
 */
export function removePatiently(dir: string, stop: () => void): void {
  const end = Date.now() + 10_000;
  for (;;) {
    stop();
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
      return;
    } catch (err) {
      if (Date.now() > end) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
}
