import { execa } from 'execa';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A private tmux server (`tmux -L <unique>`), killed by `kill()`. */
export interface TmuxServer {
  socket: string;
  tmux(...args: string[]): Promise<string>;
  /** The visible text of a pane or window target. */
  capture(target: string): Promise<string>;
  /**
   * Sends the server SIGCHLD: tmux built with libutempter can miss a pane process's exit and
   * leave it a zombie until another SIGCHLD (github.com/tmux/tmux/issues/311). The reaper does the same.
   */
  nudge(): Promise<void>;
  /**
   * Polls `capture(target)` until `pattern` matches; returns that capture. Like `eventually`,
   * the deadline is never shorter than 30 s: it only bounds how long a failing test waits.
   */
  waitFor(target: string, pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** A detached session of `width` × `height` running `command` (a shell string); its pane's id. */
  newPane(command: string, width: number, height: number): Promise<string>;
  kill(): Promise<void>;
}

/**
 * A private tmux server: `-L <unique>` by default; with `outsideTmp`, `-S` on a socket in a
 * fresh directory of the repository (`.test-sockets/`), where nothing under /tmp covers it.
 * With `tmpdir`, still `-L <unique>`, but under `TMUX_TMPDIR=<tmpdir>` (a fleet whose
 * commands all pass that variable, see `testSocketDir`).
 */
export function tmuxServer(opts: { outsideTmp?: boolean; tmpdir?: string } = {}): TmuxServer {
  const name = `flotilla-test-${randomBytes(6).toString('hex')}`;
  const dir = opts.outsideTmp ? testSocketDir(name.slice(-8)) : null;
  const socket = dir ? join(dir, 's') : name;
  const env = opts.tmpdir ? { TMUX_TMPDIR: opts.tmpdir } : {};
  const tmux = async (...args: string[]): Promise<string> => {
    const r = await execa('tmux', [dir ? '-S' : '-L', socket, ...args], { reject: false, env });
    if (r.exitCode !== 0) throw new Error(`tmux ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const capture = (target: string) => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', target);
  const nudge = async () => {
    const pid = Number(await tmux('display-message', '-p', '#{pid}').catch(() => ''));
    if (Number.isInteger(pid) && pid > 1)
      try {
        process.kill(pid, 'SIGCHLD');
      } catch {
        /* gone */
      }
  };
  return {
    socket,
    tmux,
    capture,
    nudge,
    async waitFor(target, pattern, timeoutMs = 30_000) {
      const end = Date.now() + Math.max(timeoutMs, 30_000);
      let last = '';
      while (Date.now() < end) {
        await nudge();
        last = await capture(target).catch(() => last);
        if (pattern.test(last)) return last;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`timed out waiting for ${pattern} in ${target}; last screen:\n${last}`);
    },
    newPane: (command, width, height) =>
      tmux('new-session', '-d', '-P', '-F', '#{pane_id}', '-x', String(width), '-y', String(height), command),
    async kill() {
      await execa('tmux', [dir ? '-S' : '-L', socket, 'kill-server'], { reject: false, env });
      if (dir) return rmSync(dir, { recursive: true, force: true });
      if (opts.tmpdir) return rmSync(opts.tmpdir, { recursive: true, force: true });
      // tmux 3.3 leaves its socket file behind; thousands of test runs would litter /tmp with them.
      rmSync(join(process.env.TMUX_TMPDIR || tmpdir(), `tmux-${process.getuid?.() ?? 0}`, socket), { force: true });
    },
  };
}

/** A fresh 0700 directory in the repository's `.test-sockets/`: outside /tmp, so nothing that hides /tmp hides it. */
export function testSocketDir(name = randomBytes(4).toString('hex')): string {
  const dir = join(fileURLToPath(new URL('../../.test-sockets/', import.meta.url)), name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * Polls an async predicate until true or throws after `timeoutMs`. The deadline only bounds how
 * long a failing test waits, never how fast something must be (that is `npm run bench`): on a
 * loaded 2-core machine a harness can take many seconds to get anywhere, so no deadline is
 * shorter than 30 s.
 */
export async function eventually<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + Math.max(timeoutMs, 30_000);
  let lastErr: unknown;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}`);
}
