import type { Log } from '../../audit/logger.js';
import type { Config } from '../../config/schema.js';
import type { Definition } from '../../definitions/types.js';
import type { AgentRecord } from '../../fleet/record.js';
import { readRecord } from '../../fleet/registry.js';
import type { Layout } from '../../layout/layout.js';
import type { Runtime } from '../../runtimes/index.js';
import { sleep } from '../../sleep.js';
import { traceMark } from '../../trace.js';
import type { AgentEnding } from './ending.js';
import type { Typist } from './idle.js';
import { fleetToolsListed } from './mcp-ready.js';
import { inputHolds, paneTypist } from './typist.js';

/**
 * Tends the running CLI (§13): the folder screen, the task of a resumed CLI that takes it only
 * once its fleet tools are connected, mail and work while it is idle, questions in its pane,
 * the fleet's limits and the API's failures. Loaded only once the CLI started: off the path to
 * its first request.
 */
export async function tendCli(d: {
  layout: Layout;
  config: Config;
  runtime: Runtime;
  rec: AgentRecord;
  definition: Definition;
  log: Log;
  configDir: string;
  prompt: string;
  trusted: boolean;
  ending: AgentEnding;
  /** One line in the agent's pane (CliPane.say). */
  say: (line: string) => void;
}): Promise<{ close(): Promise<void> }> {
  const { layout, config, runtime, rec, log, configDir, ending } = d;
  const [{ tendIdleCli }, { openRestricted }] = await Promise.all([
    import('./idle.js'),
    import('./restricted-open.js'),
  ]);
  const pane = readRecord(layout, rec.id)?.tmux ?? null;
  const typist = pane
    ? await paneTypist(pane, configDir, {
        guardMs: runtime.pasteGuardMs,
        typesNotice: runtime.typesNotice,
        inputPrompt: runtime.inputPrompt,
        question: runtime.paneQuestion?.shows,
      })
    : null;
  // An untrusted folder: the CLI's folder screen is answered "open restricted", never "trust" (until a turn begins).
  if (pane && !d.trusted)
    void openRestricted(
      runtime,
      pane,
      log,
      () => ending.current() !== null || readRecord(layout, rec.id)?.status === 'working',
    ).catch((err: unknown) => log.warn({ err: String(err) }, "could not answer the CLI's folder screen"));
  if (runtime.firstTurnWaitsForMcp && rec.resumedFrom && d.prompt.trim()) {
    // A resumed CLI would send an argv prompt before its MCP servers are connected, without the fleet tools.
    void firstPrompt(configDir, d.prompt, typist, runtime.inputPrompt, log, () => {
      const status = readRecord(layout, rec.id)?.status;
      return ending.current() !== null || status === undefined || status !== 'starting';
    }).catch((err: unknown) => log.warn({ err: String(err) }, 'could not type the task'));
  }
  const waker = await tendIdleCli({
    layout,
    config,
    runtime,
    rec,
    typist,
    log,
    configDir,
    onLost: (reason) => ending.stop(reason),
    hookContext: {
      agentId: rec.id,
      agentName: d.definition.name,
      parentId: rec.parentId,
      cwd: rec.cwd,
      onWarn: (m: string) => log.warn({}, m),
    },
  });
  // A question the CLI asks in its own pane is in the fleet's queue too: the first answer wins
  // (cli-host/pane-question.ts).
  const questions =
    runtime.paneQuestion && typist
      ? (await import('./pane-question.js')).answerPaneQuestions({
          layout,
          config,
          runtime,
          agentId: rec.id,
          typist,
          log,
        })
      : null;
  const turns = await watchTurns({ ...d, typist });
  return {
    async close() {
      turns.close();
      await questions?.close();
      await waker.close();
    },
  };
}

/**
 * The fleet's limits (docs/runtimes.md, "Limits"): the CLI's answers counted from its session
 * file. Fail fast (docs/runtimes.md): a refused credential ends the agent, any other API error the task.
 */
async function watchTurns(d: {
  layout: Layout;
  config: Config;
  runtime: Runtime;
  rec: AgentRecord;
  log: Log;
  configDir: string;
  ending: AgentEnding;
  typist: Typist | null;
  say: (line: string) => void;
}): Promise<{ close(): void }> {
  const { layout, config, runtime, rec, log, ending, typist } = d;
  const [{ enforceLimits }, { watchSession }, { endVendorTask }] = await Promise.all([
    import('./limits.js'),
    import('./session-watch.js'),
    import('./task-end.js'),
  ]);
  const limits = enforceLimits({
    layout,
    config,
    runtime,
    id: rec.id,
    log,
    sessionFile: () => session.file(),
    interrupt: async () => {
      await typist?.key('Escape');
    },
    endAgent: (reason) => ending.stop(reason, 'completed'),
  });
  const session = watchSession(runtime, d.configDir, {
    onModel: () => limits.onModel(),
    onFailure: (failure) => {
      log.warn({ reason: failure.reason, auth: failure.auth }, 'the vendor API ended a turn with an error');
      if (failure.auth) {
        d.say(`\nflotilla: ${failure.reason} — the agent ends failed`);
        ending.stop(failure.reason, 'failed');
        return;
      }
      void endVendorTask(layout, config, rec.id, { status: 'failed', text: '', reason: failure.reason }).catch(
        (err: unknown) => log.warn({ err: String(err) }, 'could not end the failed task'),
      );
    },
  });
  return {
    close() {
      session.close();
      limits.close();
    },
  };
}

/** The longest the first task waits, after the fleet tools are listed, for the CLI's input box to show. */
const INPUT_MOUNT_MS = 500;

/** How long a typed first task may go without its turn starting before Enter is pressed again, and how often. */
const TURN_START_MS = 5_000;
const RE_ENTERS = 3;

/** A resumed CLI's first task, typed once its fleet tools are listed (≤ 30 s), as a person would. */
async function firstPrompt(
  configDir: string,
  prompt: string,
  typist: Typist | null,
  inputPrompt: readonly string[] | undefined,
  log: { warn(o: object, m: string): void },
  /** Whether the task's turn began (its turn-start hook marked the record) or the agent is ending. */
  turnStarted: () => boolean,
): Promise<void> {
  if (!typist) return;
  // Seen by inotify (mcp-ready.ts), not by a look every 50 ms: ~25 ms sooner on average.
  if (!(await fleetToolsListed(configDir)))
    log.warn({}, 'the fleet MCP server did not answer within 30 s; sending the task anyway');
  traceMark('shim: MCP ready seen');
  // The input box may mount a moment after the MCP connection: typed once the pane shows it, or after INPUT_MOUNT_MS.
  const mounted = Date.now() + INPUT_MOUNT_MS;
  const shows = (screen: string) => inputPrompt?.some((mark) => screen.includes(mark)) ?? false;
  while (Date.now() < mounted && !shows(await typist.screen().catch(() => ''))) await sleep(25);
  const task = prompt.trim();
  // A window closed meanwhile: the agent is ending, and the shim's signal handler finishes it.
  try {
    await typist.submit(task);
  } catch (err) {
    log.warn({ err: String(err) }, 'could not type the task');
    return;
  }
  // A busy CLI can drop the Enter while it redraws for a reason of its own (the typist then saw
  // the screen change): the task sits in its input box and no turn starts. Enter is pressed
  // again while the input line still holds the task and the turn has not begun.
  for (let i = 0; i < RE_ENTERS && inputPrompt; i++) {
    const until = Date.now() + TURN_START_MS;
    while (Date.now() < until && !turnStarted()) await sleep(100);
    if (turnStarted()) return;
    const screen = await typist.screen().catch(() => null);
    if (screen === null || !inputHolds(screen, inputPrompt, task)) return;
    log.warn({}, 'the first task is still in the input box: Enter again');
    await typist.key('Enter').catch(() => undefined);
  }
}
