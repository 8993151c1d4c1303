import { readdirSync, readFileSync } from 'node:fs';
import type { Log } from '../../audit/logger.js';
import type { Config } from '../../config/schema.js';
import type { Definition } from '../../definitions/types.js';
import type { AgentRecord, TaskResult } from '../../fleet/record.js';
import { readRecord } from '../../fleet/registry.js';
import type { SlotHold } from '../../fleet/slots.js';
import type { Layout } from '../../layout/layout.js';
import type { CliPane, CliProcess } from './cli-pane.js';

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
  /** The CLI's process once started, or the bubblewrap it runs in (`contained`): what `stop` ends. */
  setChild(child: CliProcess, contained?: boolean): void;
}

/** An ending its pane asks for too (a cancel, a closed window), from its first moment: one while the CLI starts too. */
export function paneEnding(pane: CliPane): AgentEnding {
  const ending = agentEnding();
  pane.onEnd((reason) => ending.stop(reason));
  return ending;
}

/**
 * How the CLI is ended, whoever asks: SIGTERM to the CLI itself, which may still write its
 * session's last lines (Claude Code writes its session file every 100 ms and at its exit),
 * then SIGKILL 3 s later to what runs it.
 */
export function agentEnding(): AgentEnding {
  let child: CliProcess | undefined;
  let inBwrap = false;
  let ending: Ending | null = null;
  const kill = (signal: NodeJS.Signals) => {
    try {
      if (signal === 'SIGTERM' && inBwrap && child?.pid !== undefined && signalInside(child.pid, signal)) return;
      child?.kill(signal);
    } catch {
      /* gone */
    }
  };
  return {
    stop: (reason, status = 'cancelled') => {
      if (ending) return;
      ending = { status, reason };
      kill('SIGTERM');
      setTimeout(() => kill('SIGKILL'), 3_000).unref();
    },
    current: () => ending,
    setChild: (c, contained = false) => {
      child = c;
      inBwrap = contained;
    },
  };
}

/**
 * Signals the CLI inside bubblewrap (the processes under its namespace init) rather than bwrap:
 * bwrap does not pass a signal on, it dies of it, and its `--die-with-parent` then SIGKILLs
 * the CLI — which loses what it had still to write: Claude Code's session file lacked the
 * turn it had just answered, so a resume of a cancelled agent lacked it too. False when no
 * CLI runs inside yet (bwrap is then signalled itself).
 */
function signalInside(bwrapPid: number, signal: NodeJS.Signals): boolean {
  const cli = childPids(bwrapPid).flatMap(childPids);
  for (const pid of cli) {
    try {
      process.kill(pid, signal);
    } catch {
      /* ended meanwhile */
    }
  }
  return cli.length > 0;
}

/** A process's children, from /proc (the kernel's list, or every process's parent where it keeps none). */
function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    /* a kernel without the list */
  }
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid …`: the name may hold spaces and parentheses, so read after the last `)`.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry));
    } catch {
      /* ended meanwhile */
    }
  }
  return out;
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
  /** A pane whose process was killed (CliPane.lost) leaves the agent to its reaper, as a killed shim did. */
  pane: Pick<CliPane, 'lost'>;
}): (status: TaskResult['status'], reason: string) => Promise<void> {
  const { layout, config, definition, log } = d;
  return onceAsync(async (status, reason) => {
    // Its door closes with it: a shim host goes on without it.
    (await import('../door-send.js')).closeAgentDoor(layout, d.record().id);
    if (d.pane.lost?.()) return d.slot.release();
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
