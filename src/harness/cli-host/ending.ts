import type { ChildProcess } from 'node:child_process';
import type { Log } from '../../audit/logger.js';
import type { Config } from '../../config/schema.js';
import type { Definition } from '../../definitions/types.js';
import type { AgentRecord, TaskResult } from '../../fleet/record.js';
import { readRecord } from '../../fleet/registry.js';
import type { SlotHold } from '../../fleet/slots.js';
import type { Layout } from '../../layout/layout.js';

/** Why the agent ends: its status and the reason it gives. */
export interface Ending {
  status: TaskResult['status'];
  reason: string;
}

/** How a vendor agent is asked to end, whoever asks: a signal, a limit, a refused credential. */
export interface AgentEnding {
  /** Ends the CLI (SIGTERM, then SIGKILL 3 s later); the first reason asked is the agent's. */
  stop(reason: string, status?: TaskResult['status']): void;
  /** Why the agent is ending, once something asked it to; null until then. */
  current(): Ending | null;
  /** The CLI's process once started: what `stop` ends. */
  setChild(child: ChildProcess): void;
}

/**
 * Takes the shim's signals from its first moment: the terminal's Ctrl-C is the CLI's to handle;
 * a cancel or a closed window ends both — even one closed while the CLI starts.
 */
export function takeSignals(): AgentEnding {
  process.on('SIGINT', () => undefined);
  let child: ChildProcess | undefined;
  let ending: Ending | null = null;
  const kill = (signal: NodeJS.Signals) => {
    try {
      child?.kill(signal);
    } catch {
      /* gone */
    }
  };
  const stop = (reason: string, status: TaskResult['status'] = 'cancelled') => {
    if (ending) return;
    ending = { status, reason };
    kill('SIGTERM');
    setTimeout(() => kill('SIGKILL'), 3_000).unref();
  };
  process.on('SIGTERM', () => stop('cancelled (SIGTERM)'));
  process.on('SIGHUP', () => stop('window closed'));
  return {
    stop,
    current: () => ending,
    setChild: (c) => {
      child = c;
    },
  };
}

/**
 * Ends the agent exactly once, whichever way the CLI ended (§5.9): its record, the stop hooks,
 * the audit, its slot. An open task ends with the CLI's fate; a cancel or a closed window ends
 * the agent `cancelled`; otherwise an agent whose last task completed ends `completed`.
 */
export function agentFinisher(d: {
  layout: Layout;
  config: Config;
  definition: Definition;
  log: Log;
  slot: SlotHold;
  ending: AgentEnding;
  /** The record as the shim last wrote it: the fallback when the registry has none. */
  record: () => AgentRecord;
}): (status: TaskResult['status'], reason: string) => Promise<void> {
  const { layout, config, definition, log } = d;
  return onceAsync(async (status, reason) => {
    const now = readRecord(layout, d.record().id) ?? d.record();
    const open = now.status !== 'idle' && !(now.lastTask && now.lastTask.task >= now.task);
    const stopped = d.ending.current()?.status === 'cancelled';
    const final =
      open || stopped ? status : now.lastTask?.status === 'completed' || status === 'completed' ? 'completed' : status;
    const [{ stopHookOnce }, { runLifecycleHooks }, { finishAgent }] = await Promise.all([
      import('../../hooks/stop-once.js'),
      import('../../hooks/run-hooks.js'),
      import('../finish.js'),
    ]);
    const hookContext = {
      agentId: now.id,
      agentName: definition.name,
      parentId: now.parentId,
      cwd: now.cwd,
      onWarn: (m: string) => log.warn({}, m),
    };
    await finishAgent({
      layout,
      config,
      record: now,
      status: final,
      reason,
      log,
      openTask: open ? { text: '', outputPath: null } : null,
      closeTranscript: () => undefined,
      runStopHooks: async (s, why) => {
        await stopHookOnce(layout, now.id, () =>
          runLifecycleHooks('stop', config.hooks.stop, { ...hookContext, status: s, exitReason: why }),
        );
      },
    });
    d.slot.release();
  });
}

function onceAsync<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  let p: Promise<void> | undefined;
  return (...args: A) => (p ??= fn(...args));
}
