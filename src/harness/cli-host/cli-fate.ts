import { constants } from 'node:os';
import type { TaskResult } from '../../fleet/record.js';
import type { Runtime } from '../../runtimes/types.js';
import { sleep } from '../../sleep.js';
import type { AgentEnding, Ending } from './ending.js';

/** How long a CLI killed by SIGHUP waits for the shim's own SIGHUP (its window closed) to say so. */
const HANGUP_WAIT_MS = 500;

/**
 * How the agent ends once its CLI exited: as the shim was asked (a cancel, a closed window, a
 * limit), else as the CLI's exit says (cliFate). A CLI killed by SIGHUP lost its terminal: its
 * window was closed, and the shim hears that from its own SIGHUP, which the kernel and tmux send
 * it at the same moment but which may reach its event loop after the CLI's exit. That one is
 * waited for (HANGUP_WAIT_MS), so a closed window ends the agent `cancelled`, not `crashed`.
 */
export async function fateOfExit(
  ending: AgentEnding,
  runtime: Runtime,
  code: number | null,
  signal: NodeJS.Signals | null,
  contained: boolean,
  hangupWaitMs = HANGUP_WAIT_MS,
): Promise<Ending> {
  const fate = cliFate(runtime, code, signal, contained);
  if (!ending.current() && killedBy(code, signal, contained) === 'SIGHUP')
    for (const end = Date.now() + hangupWaitMs; !ending.current() && Date.now() < end;) await sleep(10);
  return ending.current() ?? fate;
}

/**
 * How the agent ends when its CLI exits on its own: killed by a signal is `crashed`, a clean
 * exit before the task ended `cancelled`, any other status `failed`. In the sandbox the shim's
 * child is bwrap, which reports a CLI killed by a signal as 128 + its number.
 */
function cliFate(
  runtime: Runtime,
  code: number | null,
  signal: NodeJS.Signals | null,
  contained: boolean,
): { status: TaskResult['status']; reason: string } {
  const killed = killedBy(code, signal, contained);
  if (killed) return { status: 'crashed', reason: `${runtime.title} killed (${killed})` };
  if (code === 0) return { status: 'cancelled', reason: `${runtime.title} exited before its task ended` };
  return { status: 'failed', reason: `${runtime.title} exited with status ${code ?? '?'}` };
}

function killedBy(code: number | null, signal: NodeJS.Signals | null, contained: boolean): NodeJS.Signals | undefined {
  return signal ?? (contained && code !== null && code > 128 ? signalName(code - 128) : undefined);
}

function signalName(n: number): NodeJS.Signals | undefined {
  return (Object.entries(constants.signals) as [NodeJS.Signals, number][]).find(([, v]) => v === n)?.[0];
}
