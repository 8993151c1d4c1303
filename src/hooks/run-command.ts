import { spawn } from 'node:child_process';
import { errorMessage } from '../errors.js';
import { killProcessGroup } from '../tools/process-group.js';

export interface HookCommandOptions {
  command: string;
  timeoutSecs: number;
  /** The complete environment (see hookEnv); nothing is inherited. */
  env: Record<string, string>;
  /** Written to the hook's stdin, then stdin is closed. */
  stdin: string;
  cwd: string;
  /** Kills the hook's process group when aborted (the agent is cancelled). */
  signal?: AbortSignal;
  /** Bytes of stdout and of stderr kept (default 64 KiB each); the rest is dropped. */
  maxOutputBytes?: number;
  /** Milliseconds between SIGTERM and SIGKILL of a timed-out group (default 1000). */
  killGraceMs?: number;
}

export interface HookCommandResult {
  /** null when killed by a signal or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  pid: number | undefined;
  /** Set when the command could not be started at all (e.g. cwd missing). */
  error?: string;
}

const DEFAULT_MAX_OUTPUT = 64 * 1024;
/** After sh exits, how long to wait for output still in the pipes before giving up on them. */
const DRAIN_MS = 200;

/**
 * Runs one hook command (§9): `/bin/sh -c` as the leader of its own process group, with only
 * the given environment, the JSON on stdin. On timeout the whole group gets SIGTERM, then
 * SIGKILL if anything in it outlives the grace period, so a hook's children die with it.
 * Never rejects: every outcome is in the result.
 */
export function runHookCommand(opts: HookCommandOptions): Promise<HookCommandResult> {
  const started = Date.now();
  const max = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const grace = opts.killGraceMs ?? 1000;
  return new Promise((resolve) => {
    // /bin/sh by absolute path: the hook's PATH is the user's, and may not even hold sh.
    const child = spawn('/bin/sh', ['-c', opts.command], {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out = capture(max);
    const err = capture(max);
    child.stdout.on('data', out.add);
    child.stderr.on('data', err.add);
    // A hook that does not read its stdin closes the pipe early: that is not a failure.
    child.stdin.on('error', () => {});
    child.stdin.end(opts.stdin);

    let timedOut = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let done = false;
    let killing: Promise<void> | undefined;
    const finish = (error?: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(drain);
      opts.signal?.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      // A killed hook's result waits until its whole group is gone, so "killed" is true when we say it.
      void (killing ?? Promise.resolve()).then(() =>
        resolve({
          exitCode: exit?.code ?? null,
          signal: exit?.signal ?? null,
          timedOut,
          durationMs: Date.now() - started,
          stdout: out.text(),
          stderr: err.text(),
          pid: child.pid,
          ...(error === undefined ? {} : { error }),
        }),
      );
    };

    const kill = (): void => {
      if (killing === undefined && child.pid !== undefined) killing = killProcessGroup(child.pid, grace);
    };
    // Fails when the `timeout` is exceeded: the hook and everything it started are killed.
    // (setTimeout fires at once past 2^31-1 ms, so longer timeouts are capped at ~24 days.)
    const timer = setTimeout(
      () => {
        // sh already exited and we are only draining its pipes: that is not a timeout.
        if (exit !== undefined) return;
        timedOut = true;
        kill();
      },
      Math.min(opts.timeoutSecs * 1000, 2 ** 31 - 1),
    );
    const onAbort = (): void => kill();
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });

    let drain: NodeJS.Timeout | undefined;
    child.on('error', (e) => finish(`could not start: ${errorMessage(e)} (cwd ${opts.cwd})`));
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // A background child of the hook may hold the pipes open for ever: read what is there, then stop.
      drain = setTimeout(() => finish(), DRAIN_MS);
    });
    child.on('close', () => finish());
  });
}

function capture(max: number): { add: (chunk: Buffer) => void; text: () => string } {
  const chunks: Buffer[] = [];
  let size = 0;
  let dropped = 0;
  return {
    add: (chunk) => {
      const room = max - size;
      if (room <= 0) {
        dropped += chunk.length;
        return;
      }
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(kept);
      size += kept.length;
      dropped += chunk.length - kept.length;
    },
    text: () =>
      Buffer.concat(chunks).toString('utf8') +
      (dropped > 0 ? `\n[flotilla: ${dropped} more bytes of hook output dropped]` : ''),
  };
}
