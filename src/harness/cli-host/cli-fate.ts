import { constants } from 'node:os';
import type { TaskResult } from '../../fleet/record.js';
import type { Runtime } from '../../runtimes/types.js';

/**
 * How the agent ends when its CLI exits on its own: killed by a signal is `crashed`, a clean
 * exit before the task ended `cancelled`, any other status `failed`. In the sandbox the shim's
 * child is bwrap, which reports a CLI killed by a signal as 128 + its number.
 */
export function cliFate(
  runtime: Runtime,
  code: number | null,
  signal: NodeJS.Signals | null,
  contained: boolean,
): { status: TaskResult['status']; reason: string } {
  const killed = signal ?? (contained && code !== null && code > 128 ? signalName(code - 128) : undefined);
  if (killed) return { status: 'crashed', reason: `${runtime.title} killed (${killed})` };
  if (code === 0) return { status: 'cancelled', reason: `${runtime.title} exited before its task ended` };
  return { status: 'failed', reason: `${runtime.title} exited with status ${code ?? '?'}` };
}

function signalName(n: number): NodeJS.Signals | undefined {
  return (Object.entries(constants.signals) as [NodeJS.Signals, number][]).find(([, v]) => v === n)?.[0];
}
