import { readFileSync } from 'node:fs';
import { createAgentLogger } from '../../audit/logger.js';
import type { Config } from '../../config/schema.js';
import type { Definition } from '../../definitions/types.js';
import type { AgentRecord } from '../../fleet/record.js';
import { updateRecord } from '../../fleet/registry.js';
import type { SlotHold } from '../../fleet/slots.js';
import type { Layout } from '../../layout/layout.js';
import { markStarting } from '../../lifecycle/starting.js';
import { loadRuntime, type VendorRuntimeName } from '../../runtimes/index.js';
import { startDone } from '../../start-done.js';
import { traceMark } from '../../trace.js';
import { CliRefused, prepareCli, type PreparedCli } from './cli-launch.js';
import { cliEnvironment, startCli } from './cli-start.js';
import { localPane, type CliPane, type StartedCli } from './cli-pane.js';
import { agentFinisher, paneEnding } from './ending.js';

/**
 * The shim (§13): the registered agent — admitted like any harness (record, lineage, depth, slot) — runs the vendor
 * CLI on its pane's terminal, so a person types straight into the CLI: in the pane's own process (`localPane`, a
 * person's `flotilla run`), or in the shim host for a spawned agent, whose pane's process starts the CLI when asked
 * (shim-host/). Tasks end in the CLI's own hooks (harness/cli-host/hook.ts); the shim tends the CLI while it is idle
 * (cli-host/idle.ts: mail, board work, TeammateIdle) and, whichever way the CLI ends (exit, SIGKILL, a closed window,
 * a cancel), ends the agent exactly once.
 */
export async function runVendorAgent(opts: {
  layout: Layout;
  config: Config;
  record: AgentRecord;
  definition: Definition;
  slot: SlotHold;
  secretKeys?: readonly string[];
  /** The sandbox's probes, started ahead (tools/sandbox-mode.ts probeSandboxSoon): waited for before they are asked. */
  sandboxProbed?: Promise<void> | undefined;
  /** Where the CLI runs: this process's own terminal unless the shim host passes the pane's. */
  pane?: CliPane;
}): Promise<number> {
  const { layout, config, definition } = opts;
  traceMark('shim: start');
  // Taken from the first moment: a window closed while the CLI starts must still end the agent.
  const pane = opts.pane ?? localPane();
  const ending = paneEnding(pane);
  // The spawner's vendor settings (base URLs, keys) win over the tmux server's older environment.
  const { takeRuntimeEnv } = await import('../../spawn/runtime-env.js');
  const env: NodeJS.ProcessEnv = { ...pane.env, ...takeRuntimeEnv(layout, opts.record.id) };
  const log = await createAgentLogger(layout, opts.record.id);
  let rec = markStarting(layout, opts.record.id, pane.process);
  const runtime = await loadRuntime(rec.runtime as VendorRuntimeName);
  const prompt = readTask(layout, rec.id);
  const finishOnce = agentFinisher({
    layout,
    config,
    definition,
    log,
    slot: opts.slot,
    ending,
    record: () => rec,
    pane,
  });

  let cli: PreparedCli | undefined;
  let exited: StartedCli['exited'];
  // What the door starts ahead for the CLI (its MCP server, a hook) starts once the CLI is exec'd, off its path.
  let execed!: (started: boolean) => void;
  const cliExeced = new Promise<boolean>((resolve) => (execed = resolve));
  try {
    await opts.sandboxProbed;
    cli = await prepareCli({ layout, config, rec, runtime, env, log, prompt, say: pane.say });
    const base = { layout, config, runtime, env };
    const childEnv = await cliEnvironment({
      ...base,
      rec,
      passEnv: definition.passEnv ?? [],
      secretKeys: opts.secretKeys ?? [],
      cli,
      execed: cliExeced,
    });
    // With a task the record stays `starting` until the CLI's turn-start hook marks it `working`:
    // the task's clock (timeout_secs) runs from then, never from the CLI's own start-up.
    if (!prompt.trim()) rec = updateRecord(layout, rec.id, { status: 'idle' });
    const early = ending.current(); // set by a signal during the awaits above
    if (early) {
      execed(false);
      cli.mirror?.close();
      await finishOnce(early.status, early.reason);
      return 1;
    }
    ({ exited } = await startCli({ ...base, rec, pane, childEnv, cli, ending, execed: cliExeced }));
  } catch (err) {
    execed(false);
    cli?.mirror?.close();
    if (!(err instanceof CliRefused) && !cli) throw err;
    const why = err instanceof CliRefused ? err.message : `could not start ${runtime.title}: ${(err as Error).message}`;
    if (err instanceof CliRefused) pane.say(`flotilla: ${why}`);
    await finishOnce('failed', why);
    return 1;
  }
  traceMark('shim: CLI started');
  execed(true);
  log.info({ bin: cli.bin, argv: cli.launch.argv, runtime: runtime.name }, 'vendor CLI started');
  // What tends the running CLI loads only now, while the CLI itself starts: off the path to its first request.
  const { tendCli } = await import('./cli-tend.js');
  const tending = await tendCli({
    layout,
    config,
    runtime,
    rec,
    definition,
    log,
    configDir: cli.configDir,
    prompt,
    trusted: cli.trusted,
    ending,
    say: pane.say,
  });
  // The CLI is started and tended: what this start compiled goes to the code cache now (src/start-done.ts).
  startDone();
  const { code, signal } = await exited;
  cli.mirror?.close();
  await tending.close();
  const { fateOfExit } = await import('./cli-fate.js');
  const fate = await fateOfExit(ending, runtime, code, signal, !!cli.bwrap);
  await finishOnce(fate.status, fate.reason);
  return fate.status === 'completed' ? 0 : 1;
}

function readTask(layout: Layout, id: string): string {
  try {
    return readFileSync(layout.taskFile(id), 'utf8');
  } catch {
    return '';
  }
}
