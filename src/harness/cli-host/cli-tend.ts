import type { Log } from '../../audit/logger.js';
import type { Config } from '../../config/schema.js';
import type { Definition } from '../../definitions/types.js';
import type { AgentRecord } from '../../fleet/record.js';
import { readRecord } from '../../fleet/registry.js';
import type { Layout } from '../../layout/layout.js';
import type { Runtime } from '../../runtimes/index.js';
import type { AgentEnding } from './ending.js';
import type { Typist } from './idle.js';
import { paneTypist } from './typist.js';

/**
 * Tends the running CLI (§13): the folder screen, mail and work while it is idle, questions in its pane,
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
  trusted: boolean;
  ending: AgentEnding;
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
    );
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
        process.stderr.write(`\nflotilla: ${failure.reason} — the agent ends failed\n`);
        ending.stop(failure.reason, 'failed');
        return;
      }
      void endVendorTask(layout, config, rec.id, { status: 'failed', text: '', reason: failure.reason });
    },
  });
  return {
    close() {
      session.close();
      limits.close();
    },
  };
}
