import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AGENT_IDENTITY_VARS } from '../fleet/agent-env.js';
import { isProcessAlive } from '../fleet/proc.js';
import type { Layout } from '../layout/layout.js';
import { CLI_ENTRY } from '../layout/package.js';
import { HARNESS_MALLOC_TUNABLES } from '../malloc-tunables.js';
import { sleep } from '../sleep.js';
import { answers } from '../socket-answers.js';
import { isVendorVar } from './runtime-env.js';

/**
 * Set in a vendor agent's pane when its spawn started the fleet's shim host beside the window's opening: the host's
 * pid. `tools/shim-pane` then waits for that host while it lives instead of starting another (and takes the
 * variable out of the agent's environment).
 */
export const SHIM_HOST_PID_ENV = 'FLOTILLA_SHIM_HOST_PID';

/**
 * Starts the fleet's shim host (`flotilla run --shim-host <socket>`), detached: its own session, its output in the
 * fleet's logs. A host that finds another one answering ends at once (server.ts), so two starts at once leave one.
 * `env` is the host's own environment, less what names an agent or its window (hostEnvironment).
 */
export function startShimHost(
  layout: Layout,
  socketPath: string,
  env: NodeJS.ProcessEnv,
): { pid: number | undefined; ended: () => boolean; logPath: string } {
  mkdirSync(layout.doorsDir, { recursive: true, mode: 0o700 });
  mkdirSync(layout.logsDir, { recursive: true });
  const logPath = join(layout.logsDir, 'shim-host.log');
  const out = openSync(logPath, 'a');
  let ended = false;
  try {
    const child = spawn(process.execPath, [CLI_ENTRY, '--root', layout.root, 'run', '--shim-host', socketPath], {
      detached: true,
      stdio: ['ignore', out, out],
      cwd: '/',
      env: hostEnvironment(env),
    });
    child.once('exit', () => (ended = true));
    child.once('error', () => (ended = true));
    child.unref();
    return { pid: child.pid, ended: () => ended, logPath };
  } finally {
    closeSync(out);
  }
}

/**
 * The host's own environment: the starter's, without what names an agent or its window, or a vendor CLI's login.
 * Every agent's work takes its pane's environment (CliPane.env); this one is what is common to them (PATH, HOME, the
 * tmux and temp folders). glibc's malloc hands memory back in it as in every harness's (src/malloc-tunables.ts),
 * unless the person set tunables of their own.
 */
function hostEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { GLIBC_TUNABLES: HARNESS_MALLOC_TUNABLES, ...env };
  for (const k of [
    ...AGENT_IDENTITY_VARS,
    'TMUX',
    'TMUX_PANE',
    'FLOTILLA_SLOT',
    'FLOTILLA_HARNESS_KIND',
    SHIM_HOST_PID_ENV,
  ])
    delete out[k];
  // A vendor CLI's login and settings reach each agent's CLI from its own pane and files, never from the host.
  for (const k of Object.keys(out)) if (isVendorVar(k)) delete out[k];
  return out;
}

/**
 * Beside a vendor agent's window (spawn/launch.ts): when no host answers, starts one, with the spawner's environment
 * less `hidden` (its keys: they reach an agent through files, never a long-lived process's environment); the pid of
 * the host now starting, which the pane is told (SHIM_HOST_PID_ENV). One start at a time: the spawns of a burst find
 * the first one's claim (startClaim) and wait for its host. Nothing when one answers or the start failed: the pane
 * then starts one.
 */
export async function shimHostAhead(
  layout: Layout,
  env: NodeJS.ProcessEnv,
  hidden: readonly string[],
): Promise<number | undefined> {
  try {
    if (await answers(layout.shimHostSocket)) return undefined;
    const claim = startClaim(layout);
    const starting = await startingHost(claim);
    if (starting !== 'none') return starting;
    const own: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(env)) if (!hidden.includes(k)) own[k] = v;
    let pid: number | undefined;
    try {
      pid = startShimHost(layout, layout.shimHostSocket, own).pid;
    } finally {
      if (pid) writePid(claim, pid);
      else rmSync(claim, { force: true });
    }
    return pid;
  } catch {
    return undefined;
  }
}

/** The claim on starting the host, beside its socket: the starting host's pid; the host removes it once it listens. */
export function startClaim(layout: Layout): string {
  return join(layout.doorsDir, '_shim-host.starting');
}

/** Into the claim only while it is there: a host that listens already has removed it. */
function writePid(claim: string, pid: number): void {
  let fd: number;
  try {
    fd = openSync(claim, 'r+');
  } catch {
    return;
  }
  try {
    writeSync(fd, `${pid}\n`);
  } finally {
    closeSync(fd);
  }
}

/** How long a claim may stay without a pid before it is taken for a spawn that died making it. */
const CLAIM_WRITE_MS = 1_000;

/**
 * Takes the claim (then 'none': this spawn starts the host), or the pid of the host another spawn is starting. A
 * claim whose host ended without listening, or left without a pid for half of CLAIM_WRITE_MS, is cleared and taken;
 * undefined when none could be had in CLAIM_WRITE_MS (the pane then starts a host).
 */
async function startingHost(claim: string): Promise<number | 'none' | undefined> {
  mkdirSync(dirname(claim), { recursive: true, mode: 0o700 });
  for (const until = Date.now() + CLAIM_WRITE_MS; ; await sleep(5)) {
    try {
      writeFileSync(claim, '', { flag: 'wx', mode: 0o600 });
      return 'none';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let pid: number;
    try {
      pid = Number(readFileSync(claim, 'utf8').trim());
    } catch {
      continue; // cleared meanwhile: claim it again
    }
    if (pid > 0 && isProcessAlive(pid)) return pid;
    if (Date.now() > until) return undefined;
    // A host that ended without listening, or a spawn that died claiming: cleared, and claimed again.
    if (pid > 0 || Date.now() > until - CLAIM_WRITE_MS / 2) rmSync(claim, { force: true });
  }
}
