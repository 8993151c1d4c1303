import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from '../../audit/logger.js';
import type { Config } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import type { AgentRecord } from '../../fleet/record.js';
import { readRecord } from '../../fleet/registry.js';
import type { HookContext } from '../../hooks/run-hooks.js';
import { predecessors } from '../../inbox/adopt.js';
import type { Layout } from '../../layout/layout.js';
import type { Runtime } from '../../runtimes/index.js';
import { DEFAULT_BOARD } from '../../tasks/task.js';
import { traceMark } from '../../trace.js';
import type { BoardPort } from '../session-deps.js';
import type { VendorTeammate } from './board-work.js';
import { feedFromBus } from '../bus-feed.js';
import { unreadCount } from './mail.js';

/** Types into the CLI's pane as a person would: a bracketed paste, then Enter on its own. */
export interface Typist {
  submit(text: string): Promise<void>;
  /** A key as a person presses it (Escape stops the CLI's turn). */
  key(name: string): Promise<void>;
  /** What the pane shows now (its visible screen). */
  screen(): Promise<string>;
}

export interface IdleDeps {
  layout: Layout;
  config: Config;
  runtime: Runtime;
  rec: AgentRecord;
  typist: Typist | null;
  log: Log;
  hookContext: HookContext;
  /** The agent's runtime folder: its `mcp-ready` says the CLI's fleet tools are connected. */
  configDir: string;
  /** The fleet marked this agent lost while its host was silent (§17.8): end it. */
  onLost(reason: string): void;
}

/** A paste the CLI has not taken up (no turn began) is typed again after this long. */
const REPASTE_MS = 15_000;
/** The input box mounts a moment after the fleet's MCP server is connected. */
const INPUT_SETTLE_MS = 1_000;
/** A CLI whose MCP server never says it is connected is typed to anyway after this long. */
const READY_ANYWAY_MS = 30_000;

/**
 * A vendor agent between tasks (§13, §15; docs/hooks.md "Team hooks"). Whenever its CLI is
 * idle — on new mail, a change on its board, and every second or few — in this order:
 * 1. the board task a teammate's last task worked gets that task's ending, as a harness
 *    teammate's does: `done` with the final answer, `failed` with why (cli-host/board-work.ts);
 * 2. unread mail wakes it: a one-line notice pasted into the pane, then Enter on its own (a
 *    paste and its Enter in one write can land as a newline in the input box); the
 *    turn-start hook then hands the mail over as data, however many lines it has. While the
 *    CLI works (or shows a permission prompt, which is part of a turn) mail waits for the
 *    turn-end hook instead;
 * 3. a teammate (`auto_claim`) claims the next claimable task on its board; the task comes
 *    to it as mail from Flotilla, which step 2 wakes it with;
 * 4. with nothing left to do after work, the TeammateIdle hooks, once per idle spell; a hook
 *    that exits 2 sends its stderr as mail, which step 2 wakes it with.
 */
export async function tendIdleCli(d: IdleDeps): Promise<{ close(): Promise<void> }> {
  const { layout, config, runtime, rec, typist, log } = d;
  const { watchInbox } = await import('../../inbox/watch.js');
  const watcher = watchInbox(layout, rec.id, {
    aliases: predecessors(layout, rec),
    poll: config.inbox.poll,
    pollIntervalMs: config.inbox.poll_interval_ms,
    rescanSecs: config.inbox.rescan_secs,
    maxBodyBytes: config.inbox.max_body_bytes,
  });
  const bus = await feedFromBus(layout, config, rec, log, d.onLost);
  // Only this agent's feed: the buses are the process's, which a shim host shares among its agents (they close at
  // its exit, src/at-exit.ts).
  const closing = (close: () => Promise<void>) => async () => {
    bus.stopPresence();
    await close();
    await bus.stopFeed();
  };
  if (!typist) return { close: closing(() => watcher.close()) };
  const { teammateIdle } = await import('../teammate-idle.js');
  const onIdle = teammateIdle(layout, config, rec, d.hookContext);
  const { board, teammate } = await boardWork(d);
  const startedAt = Date.now();
  /** The last task whose ending the TeammateIdle hooks have seen. */
  let idleSeen = rec.lastTask?.task ?? 0;
  /** The last paste, and the agent's tasks when it was made: a turn begun since means it was taken up. */
  let pasted: { at: number; mark: string } | null = null;
  let busy = false;
  let again = false;

  const ready = () => inputReady(d.configDir, startedAt);

  const wake = async (now: AgentRecord, count: number): Promise<void> => {
    const mark = `${now.task}/${now.lastTask?.task ?? 0}`;
    // One paste per burst (the hook drains everything that arrived meanwhile); typed again only if
    // no turn took it up — a CLI slow to start its turn must not be handed a second, empty one.
    if (!ready() || (pasted && pasted.mark === mark && Date.now() - pasted.at < REPASTE_MS)) return;
    pasted = { at: Date.now(), mark };
    await typist.submit(runtime.deliver(count));
  };

  const tick = async (): Promise<void> => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        const now = readRecord(layout, rec.id);
        if (!now || now.status !== 'idle') break;
        await teammate?.report(now);
        const count = await unreadCount(layout, rec.id, config.inbox.max_body_bytes);
        if (count > 0) {
          await wake(now, count);
          break;
        }
        if (teammate && ready() && (await teammate.claim(now))) {
          again = true;
          continue;
        }
        if (onIdle && now.lastTask && now.lastTask.task > idleSeen) {
          idleSeen = now.lastTask.task;
          await onIdle().catch((err: unknown) => log.warn({ err: errorMessage(err) }, 'TeammateIdle hooks failed'));
        }
      } while (again);
    } catch (err) {
      // A full disk, a pane gone: the next look tries again.
      log.warn({ err: errorMessage(err) }, 'idle agent: could not wake it or hand it work');
    } finally {
      busy = false;
    }
  };
  watcher.on('message', mailSeen(tick));
  const stopWatch = board?.watch(() => {
    teammate?.changed();
    void tick();
  });
  // Mail left when a turn ended, a task that just ended: look again soon (sooner for a teammate, whose work this is).
  const timer = setInterval(() => void tick(), board || onIdle ? 1_000 : 5_000);
  timer.unref();
  return {
    close: closing(async () => {
      clearInterval(timer);
      stopWatch?.();
      await watcher.close();
    }),
  };
}

/** The inbox watcher's listener, marked for bench/ (FLOTILLA_TRACE, src/trace.ts): the shim saw new mail. */
function mailSeen(then: () => Promise<void>): () => void {
  return () => {
    traceMark('shim: mail seen');
    void then();
  };
}

/** A teammate's board (`auto_claim`) and its work there; neither for an agent without one. */
async function boardWork(d: IdleDeps): Promise<{ board: BoardPort | null; teammate: VendorTeammate | null }> {
  const { layout, config, rec, log } = d;
  if (!rec.autoClaim) return { board: null, teammate: null };
  const { boardPort } = await import('../teammate.js');
  const board = boardPort(layout, rec.id, rec.board ?? DEFAULT_BOARD, log, config.inbox.max_body_bytes);
  const { vendorTeammate } = await import('./board-work.js');
  return { board, teammate: vendorTeammate({ layout, config, rec, log, board }) };
}

/** Whether the CLI's input box takes a paste: its fleet tools connected a moment ago, or it never said so for long. */
function inputReady(configDir: string, startedAt: number): boolean {
  try {
    return Date.now() - statSync(join(configDir, 'mcp-ready')).mtimeMs >= INPUT_SETTLE_MS;
  } catch {
    return Date.now() - startedAt >= READY_ANYWAY_MS;
  }
}
