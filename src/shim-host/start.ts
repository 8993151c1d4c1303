import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FlotillaError } from '../errors.js';
import { AGENT_IDENTITY_VARS } from '../fleet/agent-env.js';
import { selfProcess } from '../fleet/proc.js';
import type { Layout } from '../layout/layout.js';
import { CLI_ENTRY } from '../layout/package.js';
import { HARNESS_MALLOC_TUNABLES } from '../malloc-tunables.js';
import { sleep } from '../sleep.js';
import { answers, serveShimHost } from './server.js';

/** How long a pane's process waits for a host it started to answer. */
const START_WAIT_MS = 20_000;

/**
 * `flotilla run --shim-host-start <socket>`, run by `tools/shim-pane` when no host answers: starts one, detached
 * from the pane (its own session, its output in the fleet's logs), and returns once it answers — or once another
 * pane's start won the race and that one answers.
 */
export async function ensureShimHost(layout: Layout, socketPath: string): Promise<void> {
  if (await answers(socketPath)) return;
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
      env: hostEnvironment(process.env),
    });
    child.once('exit', () => (ended = true));
    child.once('error', () => (ended = true));
    child.unref();
  } finally {
    closeSync(out);
  }
  for (const until = Date.now() + START_WAIT_MS; Date.now() < until; await sleep(10)) {
    if (await answers(socketPath)) return;
    if (ended) break;
  }
  if (await answers(socketPath)) return;
  throw new FlotillaError(`the fleet's shim host did not start — see ${logPath}`, { code: 'shim-host' });
}

/**
 * The host's own environment: the first pane's, without what names an agent or its window. Every agent's work takes
 * its pane's environment (CliPane.env); this one is what is common to them (PATH, HOME, the tmux and temp folders).
 * glibc's malloc hands memory back in it as in every harness's (src/malloc-tunables.ts), unless the person set
 * tunables of their own.
 */
function hostEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { GLIBC_TUNABLES: HARNESS_MALLOC_TUNABLES, ...env };
  for (const k of [...AGENT_IDENTITY_VARS, 'TMUX', 'TMUX_PANE', 'FLOTILLA_SLOT', 'FLOTILLA_HARNESS_KIND'])
    delete out[k];
  return out;
}

/**
 * `flotilla run --shim-host <socket>`: be the fleet's shim host until it has been idle a while. Its pid is written
 * beside its socket (fleet/lineage.ts: its children act as the agent they are for). One agent's failure is logged
 * here and ends that agent, never the host's others: a rejection nobody handled is written to the log, not fatal.
 */
export async function runShimHost(layout: Layout, socketPath: string): Promise<number> {
  process.on('unhandledRejection', (err) => logLine(`an unhandled rejection: ${describe(err)}`));
  process.on('uncaughtException', (err) => logLine(`an uncaught exception: ${describe(err)}`));
  process.on('SIGHUP', () => undefined);
  const me = selfProcess();
  const pidFile = layout.shimHostPid(me.pid);
  mkdirSync(layout.doorsDir, { recursive: true, mode: 0o700 });
  // Written before it listens: no pane reaches it, and so none of its commands runs, before it can be named.
  writeFileSync(pidFile, `${me.start ?? ''}\n`, { mode: 0o600 });
  try {
    const { closed } = await serveShimHost(layout, socketPath, { log: logLine });
    logLine(`serving ${layout.root} at ${socketPath}`);
    await closed;
  } finally {
    rmSync(pidFile, { force: true });
  }
  logLine('no agent left: ending');
  return 0;
}

function logLine(text: string): void {
  process.stderr.write(`${new Date().toISOString()} shim host ${process.pid}: ${text}\n`);
}

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}
