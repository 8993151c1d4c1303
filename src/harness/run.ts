import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../config/schema.js';
import { errorMessage, FlotillaError, UsageError } from '../errors.js';
import { getRecord } from '../fleet/registry.js';
import { selfPid } from '../fleet/proc.js';
import type { AgentRecord } from '../fleet/record.js';
import { holdSlot, parseSlotEnv, type SlotHold } from '../fleet/slots.js';
import type { Layout } from '../layout/layout.js';
import type { ContextMode } from '../spawn/context.js';
import type { TranscriptEntry } from '../transcript/entries.js';
import type { VendorRuntimeName } from '../runtimes/types.js';
import type { CliPane } from './cli-host/cli-pane.js';
import { admitSelf } from './admit.js';
import type { StartedAgent } from './start.js';
import { WorkSlot } from './work-slot.js';
import { startDone } from '../start-done.js';
import { traceMark } from '../trace.js';

/**
 * `flotilla run`: be one agent in this process (§6). Either spawned (`--spawned <id>`: the
 * record exists, the slot is handed over) or started directly by a person or a shell, in
 * which case this process does the spawner's part itself and is a child of whatever agent
 * it descends from.
 */
export interface RunOptions {
  layout: Layout;
  config: Config;
  spawnedId?: string | undefined;
  prompt?: string | undefined;
  agent?: string | undefined;
  id?: string | undefined;
  model?: string | undefined;
  oneshot?: boolean | undefined;
  context?: ContextMode | undefined;
  /** Conversation to continue (resume). */
  resumedFrom?: string | undefined;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  /** A spawned vendor agent's pane, for its shim in the shim host (shim-host/): its environment is the pane's. */
  pane?: CliPane | undefined;
}

/** Returns the process exit code. */
export async function runHarness(opts: RunOptions): Promise<number> {
  traceMark('harness: start');
  const { layout, config } = opts;
  let record: AgentRecord;
  let slot: SlotHold;
  let sandboxProbed: Promise<void> | undefined;
  const env = opts.pane?.env ?? process.env;
  if (opts.spawnedId) {
    record = getRecord(layout, opts.spawnedId);
    // Probed from now on, beside the keys and the admission (a person's own run: once it is registered).
    sandboxProbed = probeVendorSandbox(config, record, env);
    // The model's keys and the bus's credentials, left by the spawner in a file read once
    // (spawn/harness-keys.ts): in this process's memory only, never in its /proc environ or
    // tmux's environment. Taken first: the admission below may ask the bus.
    const { takeHarnessKeys } = await import('../spawn/harness-keys.js');
    const keys = takeHarnessKeys(layout, record.id);
    Object.assign(env, keys);
    // The bus's credentials are the fleet's, the same for every agent a shim host runs: its connections are its own.
    if (opts.pane)
      for (const k of (await import('../tools/command-env.js')).busCredentialVars(config))
        if (keys[k] !== undefined) process.env[k] = keys[k];
    try {
      slot = await admitSelf(layout, config, record, env.FLOTILLA_SLOT);
      traceMark('harness: admitted');
    } catch (err) {
      await refuse(layout, config, record, err);
      throw err;
    }
  } else {
    ({ record, slot } = await registerOwnRun(opts));
    sandboxProbed = probeVendorSandbox(config, record, env);
  }

  let started: StartedAgent;
  let signals: ReturnType<typeof onSignals>;
  try {
    const { loadDefinitions, pickDefinition } = await import('../definitions/load.js');
    const loaded = await loadDefinitions({ layout, config });
    const definition = pickDefinition(loaded, record.name);
    // Every key any definition may request: its variable, come from a tmux server started with it exported, is nobody's
    // to inherit (§11).
    const secretKeys = [...new Set(loaded.definitions.flatMap((d) => d.secrets))];
    if (record.runtime !== 'flotilla') {
      // A vendor CLI (§13): its shim is the registered agent, here or in the shim host (`opts.pane`).
      const { runVendorAgent } = await import('./cli-host/shim.js');
      return await runVendorAgent({
        layout,
        config,
        record,
        definition,
        slot,
        secretKeys,
        sandboxProbed,
        pane: opts.pane,
      });
    }
    if (opts.pane) throw new FlotillaError(`agent '${record.id}' runs Flotilla's own harness, not in the shim host`);
    // Signals are caught from here on: one that comes while the agent starts is acted on once it has.
    signals = onSignals();
    let previous: TranscriptEntry[] | undefined;
    if (record.resumedFrom) {
      const { readTranscript } = await import('../transcript/reader.js');
      previous = readTranscript(layout, record.resumedFrom).entries;
    }
    const caps =
      config.fleet.bus === 'maildir' ? undefined : (await import('../bus/open.js')).busFor(layout, config).caps;
    const work = new WorkSlot(layout, config.limits.max_running, slot, record.id, caps);
    // Loaded only now, after the slot handoff: the spawner waits for that handoff, not for the
    // tools, the session and the model to load (§14).
    const { startAgent } = await import('./start.js');
    started = await startAgent({
      layout,
      config,
      record,
      definition,
      slot: work,
      interactive: record.mode === 'interactive',
      secretKeys,
      ...(previous ? { previous } : {}),
    });
  } catch (err) {
    // Whatever fails once the window is open ends the record `failed` with the message, so
    // `--wait`, `status` and the log say why, not just "exited with status 1".
    await failStart(layout, config, record, err);
    throw err;
  }
  // What the start compiled goes to the code cache now, however this agent ends (src/start-done.ts).
  traceMark('harness: agent started');
  startDone();
  const { session } = started;
  // A cancel that comes before the run begins still ends a task the agent was given.
  if (started.prompt.trim()) session.openTask();
  // Once ended, exit even if a REPL still holds the terminal: cancel waits for the process (§5.8).
  const stop = (reason: string) => void session.shutdown('cancelled', reason).finally(() => process.exit(1));
  signals.stop = stop;
  if (signals.pending) stop(signals.pending);

  if (record.mode === 'interactive' && opts.stdinIsTTY) return runInteractive(started, config, layout);
  return runOneShot(started, opts.spawnedId ? null : layout);
}

/**
 * A vendor CLI's sandbox, probed from now on beside the admission and the definitions' load (its CLI's exec waited
 * for the probes in turn); nothing for the in-process harness.
 */
function probeVendorSandbox(config: Config, record: AgentRecord, env: NodeJS.ProcessEnv): Promise<void> | undefined {
  if (record.runtime === 'flotilla') return undefined;
  return Promise.all([import('../tools/sandbox-mode.js'), import('./cli-host/sandboxed-cli.js')])
    .then(([{ probeSandboxSoon }, { nestsOwnSandbox }]) =>
      probeSandboxSoon(config, env, nestsOwnSandbox(record.runtime as VendorRuntimeName, record.permissionMode)),
    )
    .catch(() => undefined); // the questions are asked again when needed
}

/**
 * Takes the slot this process reserved for itself: the host's, and on a bus with fleet-wide caps the fleet's too (§18).
 */
async function holdOwnSlot(layout: Layout, config: Config, envValue: string, agentId: string): Promise<SlotHold> {
  const slot = parseSlotEnv(envValue)!;
  if (config.fleet.bus === 'maildir') return holdSlot(layout, slot.index, slot.token);
  const { busFor } = await import('../bus/open.js');
  const { holdRunning } = await import('../fleet/fleet-slot.js');
  return holdRunning(layout, busFor(layout, config).caps, slot, agentId);
}

/** `ownRun`: the fleet of a run in its caller's own process (not a spawned harness): its answer goes to stdout. */
async function runOneShot(started: StartedAgent, ownRun: Layout | null): Promise<number> {
  const { session, record, prompt } = started;
  process.stderr.write(
    `[flotilla:agent id=${record.id} pid=${selfPid()} depth=${record.depth}${started.scripted ? ' model=scripted' : ''}]\n`,
  );
  let answer = '';
  session.on((e) => {
    if (e.type === 'task_end') answer = e.text;
    if (e.type === 'done' && e.error && e.reason !== 'completed')
      process.stderr.write(`flotilla: ${e.reason}: ${e.error}\n`);
    if (e.type === 'notice' && e.level === 'error') process.stderr.write(`flotilla: ${e.text}\n`);
  });
  // Only a teammate waits for the board; any other agent with no prompt (a background resume)
  // runs on the mail it adopted.
  if (prompt.trim() || !record.autoClaim) await session.runTask(prompt);
  else {
    // A teammate spawned with no task of its own (§15): it idles until the board has work.
    session.idleWithoutTask();
    void session.wake();
  }
  await session.whenFinished();
  const final = session.record();
  if (answer) process.stdout.write(answer.endsWith('\n') ? answer : answer + '\n');
  // An agent's `flotilla run` hands the answer to that agent on its stdout: read there, not mail to show it again
  // (docs/decisions.md "Handed on is read"). A person's run leaves it as their mail, as before.
  if (ownRun && final.parentId && final.lastTask)
    await (
      await import('../lifecycle/handed-on.js')
    ).markHandedOn(ownRun, final.parentId, [{ id: final.id, task: final.lastTask.task }]);
  return final.lastTask?.status === 'completed' || final.status === 'completed' ? 0 : 1;
}

async function runInteractive(started: StartedAgent, config: Config, layout: Layout): Promise<number> {
  const { session, record, prompt } = started;
  const { startRepl } = await import('./repl.js');
  const { chatActionsFor } = await import('./chat/fleet-actions.js');
  const chat = await chatActionsFor(layout, config, record);
  const repl = startRepl(session, {
    input: process.stdin,
    output: process.stdout,
    chat: chat.actions,
    notices: chat.notices,
    header: {
      id: record.id,
      name: record.name,
      depth: record.depth,
      maxDepth: config.limits.max_depth,
      model: record.model,
      scripted: record.scripted,
      parentId: record.parentId,
    },
  });
  // No prompt (a resume, a bare `flotilla run`): mail already waiting is surfaced at once.
  if (prompt.trim()) void session.runTask(prompt);
  // No task yet: the slot handed over at spawn goes back until work arrives (mail already waiting is such work).
  else {
    session.idleWithoutTask();
    void session.wake();
  }
  // Whichever ends first: the pane (Ctrl-D, /exit) or the agent (idle timeout, cancel).
  await Promise.race([repl, session.whenFinished()]);
  await session.whenFinished();
  chat.close();
  // A closed window ends here too: its terminal is let go at exit (cli/output.ts), so the process exits with this
  // status, not Node's abort on the terminal gone.
  return session.record().status === 'completed' ? 0 : 1;
}

/**
 * A harness that could not start: record `failed` with the reason, its parent told (once), its stop hooks run, the log
 * written.
 */
async function failStart(layout: Layout, config: Config, record: AgentRecord, err: unknown): Promise<void> {
  const reason = errorMessage(err);
  try {
    mkdirSync(dirname(layout.log(record.id)), { recursive: true });
    appendFileSync(
      layout.log(record.id),
      JSON.stringify({
        level: 50,
        time: Date.now(),
        agent: record.id,
        pid: process.pid,
        msg: `could not start: ${reason}`,
      }) + '\n',
    );
  } catch {
    /* the record below still says it */
  }
  try {
    const { endDead } = await import('../lifecycle/reconcile.js');
    await endDead(layout, config, record, reason, 'failed');
  } catch {
    // The CLI prints the error in the pane either way.
  }
}

/**
 * A refused harness (§5.6): terminal state, its parent told (one completion), its stop hooks
 * run like any other ending's — a hook that cleans up after an agent must not miss the ones
 * that never started — and the bracketed line printed by the CLI.
 */
async function refuse(layout: Layout, config: Config, record: AgentRecord, err: unknown): Promise<void> {
  try {
    const { endDead } = await import('../lifecycle/reconcile.js');
    await endDead(layout, config, record, errorMessage(err), 'refused');
  } catch {
    // The refusal itself is what matters; the CLI prints it.
  }
}

function onSignals(): { stop: ((reason: string) => void) | null; pending: string | null } {
  const state: { stop: ((reason: string) => void) | null; pending: string | null } = { stop: null, pending: null };
  let count = 0;
  const handler = (sig: NodeJS.Signals) => {
    // A second signal while ending changes nothing: exiting now would skip the completion or
    // the stop hooks half-way. `flotilla cancel` escalates to SIGKILL, and the reaper finishes.
    if (count++ > 0) return;
    const reason = sig === 'SIGHUP' ? 'window closed' : `cancelled (${sig})`;
    if (state.stop) state.stop(reason);
    else state.pending = reason;
  };
  process.on('SIGTERM', handler);
  process.on('SIGHUP', handler);
  return state;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `flotilla run` (no spawner): this process registers its own agent, then hands the running slot to itself. */
async function registerOwnRun(opts: RunOptions): Promise<{ record: AgentRecord; slot: SlotHold }> {
  const { layout, config } = opts;
  const interactive = !opts.prompt && opts.stdinIsTTY && opts.stdoutIsTTY && !opts.oneshot;
  const prompt = opts.prompt ?? (interactive ? '' : await readStdin());
  if (!interactive && !prompt.trim()) {
    throw new UsageError(
      "no instruction given — pass it as arguments, with --prompt, or on stdin (echo 'task' | flotilla run)",
    );
  }
  const { prepareSpawn } = await import('../spawn/prepare.js');
  const prepared = await prepareSpawn(layout, config, {
    agent: opts.agent,
    id: opts.id,
    prompt,
    model: opts.model,
    mode: interactive ? 'interactive' : opts.stdinIsTTY || opts.stdoutIsTTY ? 'oneshot' : 'headless',
    context: opts.context,
    cwd: process.cwd(),
    resumedFrom: opts.resumedFrom,
  });
  // This process is both spawner and harness: hand the reservation to itself.
  const [hold, handed] = await Promise.all([
    holdOwnSlot(layout, config, prepared.slot.envValue, prepared.record.id),
    prepared.slot.waitForHandoff(5_000),
  ]);
  if (!handed) throw new FlotillaError('could not take the running slot — try again');
  return { record: prepared.record, slot: hold };
}
