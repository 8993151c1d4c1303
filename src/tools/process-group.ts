import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { isErrno } from '../errors.js';
import { sleep } from '../sleep.js';
import { OutputCapture } from './output-capture.js';
import { heldBeyondWrappers } from './pipe-holders.js';

/**
 * Runs a command as the leader of its own process group (`detached` = setsid), so a timeout or
 * a cancel can kill it together with everything it started: `process.kill(-pid, …)` reaches
 * grandchildren that a kill of the child alone would orphan. This is the one place where abort
 * and timeout plumbing for processes lives (CONTRIBUTING.md, "How the code reads" 11: no hand-written abort per tool).
 */

export interface GroupRunOptions {
  cwd: string;
  /** The whole environment of the command (not merged with this process's). */
  env: NodeJS.ProcessEnv;
  /** Kill the group after this many milliseconds. */
  timeoutMs: number;
  /** Aborting kills the group (Ctrl-C, a cancelled turn). */
  signal: AbortSignal;
  /** Between SIGTERM and SIGKILL (default 2000 ms). */
  killGraceMs?: number;
  /** Output kept in memory, head and tail halves (default 1 MiB). */
  maxCaptureBytes?: number;
  /**
   * After the command exits, how long to wait for processes it left in the background that
   * still hold its output open (default 300 ms); then stop reading and return.
   */
  drainMs?: number;
  /**
   * The command runs under the namespace init (tools/sandbox.ts), which reports the command's
   * exit status as a line on fd 3 and may outlive it while background processes run: that
   * line, not the wrapper's exit, ends the call.
   */
  statusFd?: boolean;
  /** Told when the group starts and ends, so a reaper can kill it if this process dies first. */
  track?: { started(pgid: number): void; ended(pgid: number): void };
}

export interface GroupRunResult {
  /** stdout and stderr as the command interleaved them (when it sent both to one pipe). */
  output: string;
  outputBytes: number;
  exitCode: number | null;
  /** The signal that ended the command, if any. */
  exitSignal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Background processes still held the output open after exit; their later output is lost. */
  heldOpen: boolean;
  /** The command could not be started (missing program or cwd). */
  spawnError?: string;
  /**
   * With `statusFd`: the wrapper ended without the init's status line and was neither killed
   * nor timed out, so the command never ran (bubblewrap refused its mounts, say).
   */
  wrapperFailed?: boolean;
  durationMs: number;
}

export function runInProcessGroup(argv: readonly string[], opts: GroupRunOptions): Promise<GroupRunResult> {
  const started = Date.now();
  const [file, ...args] = argv;
  const base = {
    output: '',
    outputBytes: 0,
    exitCode: null,
    exitSignal: null,
    timedOut: false,
    aborted: false,
    heldOpen: false,
  };
  if (file === undefined) return Promise.resolve({ ...base, spawnError: 'empty argv', durationMs: 0 });
  if (opts.signal.aborted) return Promise.resolve({ ...base, aborted: true, durationMs: 0 });

  const capture = new OutputCapture(opts.maxCaptureBytes ?? 1024 * 1024);
  const stdio = opts.statusFd ? (['ignore', 'pipe', 'pipe', 'pipe'] as const) : (['ignore', 'pipe', 'pipe'] as const);
  // node:child_process on first use: the tools' modules load where no tool runs yet (`flotilla mcp`'s start, §14).
  const child = process
    .getBuiltinModule('node:child_process')
    .spawn(file, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: [...stdio] });
  const pgid = child.pid;
  if (pgid !== undefined) opts.track?.started(pgid);
  child.stdout!.on('data', (chunk: Buffer) => capture.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => capture.push(chunk));

  return new Promise((resolve) => {
    let exited = false;
    let openStreams = 2;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let drainTimer: NodeJS.Timeout | undefined;
    let done = false;
    const stop = groupStopper(pgid, opts);

    const finish = (spawnError?: string, stopReading = false): void => {
      if (done) return;
      done = true;
      stop.dispose();
      clearTimeout(drainTimer);
      // Under a wrapper that outlives the command, the pipe may be held by the wrapper alone.
      const heldOpen =
        stopReading &&
        (!opts.statusFd || pgid === undefined || heldBeyondWrappers(pgid, 1) || heldBeyondWrappers(pgid, 2));
      if (stopReading) {
        child.stdout!.destroy();
        child.stderr!.destroy();
        if (opts.statusFd) (child.stdio[3] as Readable).destroy();
      }
      void (stop.killing ?? Promise.resolve()).then(() => {
        const { timedOut, aborted } = stop;
        resolve({
          output: capture.text(),
          outputBytes: capture.total,
          exitCode,
          exitSignal,
          timedOut,
          aborted,
          heldOpen,
          ...(spawnError === undefined ? {} : { spawnError }),
          ...(opts.statusFd && !end.statusSeen() && !timedOut && !aborted && spawnError === undefined
            ? { wrapperFailed: true }
            : {}),
          durationMs: Date.now() - started,
        });
      });
    };

    const onExit = (code: number | null, sig: NodeJS.Signals | null): void => {
      if (exited) return;
      exited = true;
      exitCode = code;
      exitSignal = sig;
      stop.stopClock();
      if (openStreams === 0) return finish();
      // Once killed, wait for the kill to finish; otherwise give background holders a moment.
      const wait = stop.killing
        ? (stop.killing.then(() => opts.drainMs ?? 300) as Promise<number>)
        : Promise.resolve(opts.drainMs ?? 300);
      void wait.then((ms) => {
        if (!done) drainTimer = setTimeout(() => finish(undefined, true), ms);
      });
    };
    const onStreamClosed = (): void => {
      if (--openStreams === 0 && exited) finish();
    };
    child.stdout!.on('close', onStreamClosed);
    child.stderr!.on('close', onStreamClosed);
    child.on('error', (err) => finish(err.message));
    child.on('exit', () => {
      if (pgid !== undefined) opts.track?.ended(pgid);
    });
    const end = watchCommandEnd(child, opts.statusFd ?? false, onExit);
  });
}

/**
 * Kills the group when the caller aborts or the time is up, and says which it was.
 * `killing` is the kill under way; `dispose` stops the clock and the listening.
 */
function groupStopper(
  pgid: number | undefined,
  opts: Pick<GroupRunOptions, 'signal' | 'timeoutMs' | 'killGraceMs'>,
): { timedOut: boolean; aborted: boolean; killing?: Promise<void>; stopClock(): void; dispose(): void } {
  const kill = (): void => {
    if (pgid !== undefined) stop.killing ??= killProcessGroup(pgid, opts.killGraceMs ?? 2000);
  };
  const onAbort = (): void => {
    stop.aborted = true;
    kill();
  };
  const timer = setTimeout(() => {
    stop.timedOut = true;
    kill();
  }, opts.timeoutMs);
  const stop = {
    timedOut: false,
    aborted: false,
    killing: undefined as Promise<void> | undefined,
    stopClock: () => clearTimeout(timer),
    dispose: () => {
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
    },
  };
  opts.signal.addEventListener('abort', onAbort, { once: true });
  return stop;
}

/**
 * Calls `onEnd` when the command ended: by the init's status line on fd 3 (with `statusFd`)
 * or by the process itself, whichever is first (a later call is the caller's to ignore).
 * `statusSeen` says whether the init ever reported.
 */
function watchCommandEnd(
  child: ChildProcess,
  statusFd: boolean,
  onEnd: (code: number | null, sig: NodeJS.Signals | null) => void,
): { statusSeen(): boolean } {
  let statusSeen = false;
  const fd3 = statusFd ? (child.stdio[3] as Readable) : null;
  let fd3Closed = false;
  if (fd3) {
    readStatusLine(fd3, (status) => {
      statusSeen = true;
      onEnd(...fromShellStatus(status));
    });
    fd3.once('close', () => {
      fd3Closed = true;
    });
  }
  child.on('exit', (code, sig) => {
    // The wrapper is gone: its status line, if any, is read by the time fd 3 closes, so
    // whether the init ever reported (`wrapperFailed`) is known then, not before.
    if (fd3 && !statusSeen && !fd3Closed) fd3.once('close', () => onEnd(code, sig));
    else onEnd(code, sig);
  });
  return { statusSeen: () => statusSeen };
}

/** How often a kill looks whether the group is gone. */
const KILL_POLL_MS = 25;
/** After SIGKILL, how long to wait for the kernel to act on it (a process stuck in I/O). */
const SIGKILL_WAIT_MS = 2000;

/** Calls back once with the first whole line of `stream` as a number (the init's `echo "$s"`). */
function readStatusLine(stream: Readable, cb: (status: number) => void): void {
  let buf = '';
  const onData = (chunk: Buffer): void => {
    buf += chunk.toString('utf8');
    const nl = buf.indexOf('\n');
    if (nl < 0) return;
    stream.off('data', onData);
    const n = Number(buf.slice(0, nl).trim());
    if (Number.isInteger(n)) cb(n);
  };
  stream.on('data', onData);
  stream.on('error', () => undefined);
}

/** A shell's `$?`: above 128 it means killed by signal (status − 128). */
function fromShellStatus(status: number): [number | null, NodeJS.Signals | null] {
  if (status > 128) {
    const name = Object.entries(constants.signals).find(([, n]) => n === status - 128)?.[0];
    if (name) return [null, name as NodeJS.Signals];
  }
  return [status, null];
}

/**
 * SIGTERM to the whole group, then SIGKILL to whatever is left after `graceMs`; resolves when
 * the group is gone (or 2 s after SIGKILL, for a process stuck in the kernel). Never rejects.
 * Used by the shell tool, hook commands and the reaper alike.
 */
export async function killProcessGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  if (await groupGone(pgid, graceMs)) return;
  signalGroup(pgid, 'SIGKILL');
  await groupGone(pgid, SIGKILL_WAIT_MS);
}

/** Sends `sig` to every process of the group; false when there is no such group (or it is not ours). */
export function signalGroup(pgid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch (err) {
    if (isErrno(err, 'ESRCH') || isErrno(err, 'EPERM')) return false;
    throw err;
  }
}

/** Polls until no live process is left in the group; false when `ms` passed first. */
async function groupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!groupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(KILL_POLL_MS);
  }
}

/** True while any process of the group is alive (zombies do not count on Linux). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return isErrno(err, 'EPERM');
  }
  // kill(0) also succeeds for zombies, which an init that does not reap (some containers)
  // leaves around forever; on Linux, look for a member that still runs.
  return process.platform === 'linux' ? linuxGroupHasLiveMember(pgid) : true;
}

function linuxGroupHasLiveMember(pgid: number): boolean {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return true;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // Fields after the parenthesised command name: state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}
