import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { FlotillaError } from '../errors.js';
import { selfProcess } from '../fleet/proc.js';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';
import { answers } from '../socket-answers.js';
import { startShimHost } from '../spawn/shim-host-process.js';
import { serveShimHost } from './server.js';

/** How long a pane's process waits for a host it started to answer. */
const START_WAIT_MS = 20_000;

/**
 * `flotilla run --shim-host-start <socket>`, run by `tools/shim-pane` when no host answers and its spawn started
 * none: starts one and returns once it answers — or once another pane's start won the race and that one answers.
 */
export async function ensureShimHost(layout: Layout, socketPath: string): Promise<void> {
  if (await answers(socketPath)) return;
  const host = startShimHost(layout, socketPath, process.env);
  for (const until = Date.now() + START_WAIT_MS; Date.now() < until; await sleep(10)) {
    if (await answers(socketPath)) return;
    if (host.ended()) break;
  }
  if (await answers(socketPath)) return;
  throw new FlotillaError(`the fleet's shim host did not start — see ${host.logPath}`, { code: 'shim-host' });
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
