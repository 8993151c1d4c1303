import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { audit } from '../../audit/audit.js';
import { createAgentLogger } from '../../audit/logger.js';
import type { Config } from '../../config/schema.js';
import type { Definition } from '../../definitions/types.js';
import type { AgentRecord, TaskResult } from '../../fleet/record.js';
import { selfProcess } from '../../fleet/proc.js';
import { readRecord, updateRecord } from '../../fleet/registry.js';
import type { SlotHold } from '../../fleet/slots.js';
import type { Layout } from '../../layout/layout.js';
import { CLI_ENTRY } from '../../layout/package.js';
import { agentEnvironment } from '../../fleet/agent-env.js';
import { loadRuntime, type VendorRuntimeName } from '../../runtimes/index.js';
import { shellCommand } from '../../tmux/quote.js';
import { sleep } from '../../sleep.js';
import { findRuntimeBinary } from '../../runtimes/binary.js';
import { planLogin } from '../../runtimes/login.js';
import { mirrorLogin, type LoginMirror } from './login-mirror.js';
import type { Typist } from './idle.js';
import { vendorCliEnvironment } from './cli-env.js';
import { cliSandbox, containCli, startContained, type StartedCli } from './sandboxed-cli.js';
import { cliFolderTrusted, untrustedFolderSettings } from './folder-trust.js';
import { DOOR_BUS_ENV, DOOR_ENV, VENDOR_DOOR_COMMANDS } from '../../inbox/door.js';
import { busCredentials } from '../../tools/command-env.js';
import { openAgentDoor, sendAs } from '../door-send.js';
import { traceMark } from '../../trace.js';

/**
 * The shim (§13): this process is the registered agent — it was admitted like any harness
 * (record, lineage, depth, slot) — and runs the vendor CLI as its child on the same
 * terminal, so a person types straight into the CLI. Tasks end in the CLI's own hooks
 * (harness/cli-host/hook.ts); this process tends the CLI while it is idle (cli-host/idle.ts: mail,
 * board work, TeammateIdle) and, whichever way
 * the CLI ends (exit, SIGKILL, a closed window, a cancel), ends the agent exactly once.
 */
export async function runVendorAgent(opts: {
  layout: Layout;
  config: Config;
  record: AgentRecord;
  definition: Definition;
  slot: SlotHold;
  secretKeys?: readonly string[];
}): Promise<number> {
  const { layout, config, definition } = opts;
  traceMark('shim: start');
  // The spawner's vendor settings (base URLs, keys) win over the tmux server's older environment.
  const { takeRuntimeEnv } = await import('../../spawn/runtime-env.js');
  const env: NodeJS.ProcessEnv = { ...process.env, ...takeRuntimeEnv(layout, opts.record.id) };
  const log = await createAgentLogger(layout, opts.record.id);
  // The terminal's Ctrl-C is the CLI's to handle; a cancel or a closed window ends both. Taken
  // from the first moment: a window closed while the CLI starts must still end the agent.
  process.on('SIGINT', () => undefined);
  let child: ChildProcess | undefined;
  type Ending = { status: TaskResult['status']; reason: string };
  let ending: Ending | null = null;
  const stop = (reason: string, status: TaskResult['status'] = 'cancelled') => {
    if (ending) return;
    ending = { status, reason };
    try {
      child?.kill('SIGTERM');
    } catch {
      /* gone */
    }
    setTimeout(() => {
      try {
        child?.kill('SIGKILL');
      } catch {
        /* gone */
      }
    }, 3_000).unref();
  };
  process.on('SIGTERM', () => stop('cancelled (SIGTERM)'));
  process.on('SIGHUP', () => stop('window closed'));
  let rec = updateRecord(layout, opts.record.id, {
    status: 'starting',
    pid: selfProcess().pid,
    pidStartTime: selfProcess().start,
    startedAt: new Date().toISOString(),
  });
  audit(layout, {
    event: 'agent_start',
    agent: rec.id,
    parent: rec.parentId ?? 'human',
    depth: rec.depth,
    model: rec.model,
    mode: rec.mode,
    runtime: rec.runtime,
  });
  const runtime = await loadRuntime(rec.runtime as VendorRuntimeName);
  const prompt = readTask(layout, rec.id);

  const finishOnce = onceAsync(async (status: TaskResult['status'], reason: string) => {
    const now = readRecord(layout, rec.id) ?? rec;
    const open = now.status !== 'idle' && !(now.lastTask && now.lastTask.task >= now.task);
    // An open task ends with the CLI's fate; a cancel or a closed window ends the agent
    // `cancelled` as it ends ours (§5.9); otherwise an agent whose last task completed ends `completed`.
    const stopped = (ending as Ending | null)?.status === 'cancelled';
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
    rec = await finishAgent({
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
    opts.slot.release();
  });

  const settings = config.runtimes[runtime.name];
  const { isTrusted } = await import('../../config/trust-store.js');
  const bin = findRuntimeBinary(runtime, env, {
    command: settings.command,
    project: layout.project,
    projectTrusted: isTrusted(layout, env),
  });
  if (!bin) {
    const why = `${runtime.title} is not installed — install it (npm install -g ${runtime.npmPackage}) or set ${runtime.binEnv} to its path`;
    process.stderr.write(`flotilla: ${why}\n`);
    await finishOnce('failed', why);
    return 1;
  }

  // Checked at spawn too; the environment may have changed since (docs/runtimes.md, "Logins").
  const login = planLogin(runtime.name, env, settings.login);
  if ('fix' in login) {
    process.stderr.write(`flotilla: ${login.fix}\n`);
    await finishOnce('failed', login.fix);
    return 1;
  }
  const configDir = layout.runtimeDir(rec.id);
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  // `flotilla resume` (§8): the CLI continues the predecessor's own session, and its unread mail is this agent's.
  let resume: string | undefined;
  if (rec.resumedFrom) {
    const [{ carrySession }, { adoptUnread }] = await Promise.all([
      import('./inherited.js'),
      import('../../inbox/adopt.js'),
    ]);
    const carried = carrySession(layout, runtime, rec.resumedFrom, configDir);
    if ('error' in carried) {
      process.stderr.write(`flotilla: ${carried.error}\n`);
      await finishOnce('failed', carried.error);
      return 1;
    }
    resume = carried.sessionId;
    adoptUnread(layout, rec.resumedFrom, rec.id);
  }
  const policy = { tools: rec.effectivePolicy.tools, permissionMode: rec.permissionMode };
  // Inside the sandbox the CLI's hooks and MCP server reach the fleet through the agent's door,
  // which refuses --root (FLOTILLA_ROOT names the fleet); outside they name it themselves.
  let bwrap: string | undefined;
  try {
    const sandbox = cliSandbox(config, env, runtime.name, rec.permissionMode);
    bwrap = sandbox.bwrap;
    if (sandbox.outside) {
      process.stderr.write(`${sandbox.outside}\n`);
      log.warn({}, sandbox.outside);
    }
  } catch (err) {
    process.stderr.write(`flotilla: ${(err as Error).message}\n`);
    await finishOnce('failed', (err as Error).message);
    return 1;
  }
  // The bus's credentials are the shim's (docs/security-fleet.md "Bus credentials"): a CLI outside
  // the sandbox on a bus that needs them reaches the fleet through the door as well.
  const busCreds = busCredentials(config, env);
  const viaDoor = !bwrap && Object.keys(busCreds).length > 0;
  const cli = bwrap || viaDoor ? [process.execPath, CLI_ENTRY] : [process.execPath, CLI_ENTRY, '--root', layout.root];
  const doorEnv = {
    FLOTILLA_ROOT: layout.root,
    [DOOR_ENV]: layout.door(rec.id),
    ...(viaDoor ? { [DOOR_BUS_ENV]: '1' } : {}),
  };
  const model = rec.model.startsWith(`${rec.runtime}:`)
    ? rec.model.slice(rec.runtime.length + 1) || undefined
    : undefined;
  // An older model may have a migration dialog to answer before its first turn, and the CLI's
  // own sub-agents are turned off in the catalogue it is given (docs/runtimes.md, "First-run answers").
  traceMark('shim: login and binary checked');
  const [catalog, untested] = await Promise.all([
    (await import('./model-catalog.js')).fleetCatalog(layout, runtime, bin, env, configDir),
    (await import('./cli-version.js')).untestedVersionNotice(layout, runtime, bin, env),
  ]);
  // Said once, in the pane, before the CLI draws: a new prompt of an untested CLI looks like a hung agent.
  if (untested) {
    process.stderr.write(`flotilla: ${untested}\n`);
    log.warn({ bin }, untested);
  }
  if (runtime.modelCatalog && !catalog.file)
    log.warn(
      {},
      `could not read ${runtime.name}'s model catalogue: the agent runs on the CLI's own, which may offer its own sub-agents outside the fleet's caps`,
    );
  traceMark('shim: version and catalogue known');
  const trusted = cliFolderTrusted(rec.cwd, env);
  // What the CLI would load of an untrusted folder by itself: hidden in the sandbox; with none, not started.
  const folderSettings = trusted ? [] : untrustedFolderSettings(runtime.folderSettings, rec.cwd, env.HOME ?? homedir());
  if (folderSettings.length && !bwrap) {
    const why = `${runtime.title} would load ${folderSettings.join(', ')} (this untrusted folder's own hooks and commands) and no sandbox hides it: 'flotilla trust' the project if it is yours, or use security.sandbox auto with bubblewrap installed`;
    process.stderr.write(`flotilla: ${why}\n`);
    log.warn({ folderSettings }, why);
    await finishOnce('failed', why);
    return 1;
  }
  // In the sandbox the CLI refreshes its shared login in a copy the shim writes back (login-mirror.ts).
  let mirror: LoginMirror | undefined;
  try {
    mirror =
      bwrap && login.file && existsSync(login.file)
        ? mirrorLogin(login.file, layout.loginMirror(rec.id), log)
        : undefined;
  } catch (err) {
    const why = `cannot share the login ${login.file ?? ''} with the sandboxed CLI: ${(err as Error).message}`;
    process.stderr.write(`flotilla: ${why}\n`);
    await finishOnce('failed', why);
    return 1;
  }
  const launch = runtime.launch(
    {
      id: rec.id,
      cwd: rec.cwd,
      trusted,
      configDir,
      prompt: runtime.promptAfterMcp ? '' : prompt,
      mcp: { command: process.execPath, args: [...cli.slice(1), 'mcp'], ...(bwrap || viaDoor ? { env: doorEnv } : {}) },
      hookCommand: (event) => shellCommand([...cli, 'runtime-hook', event]),
      model,
      modelUpgrades: catalog.upgrades,
      modelCatalogFile: catalog.file,
      env,
      loginFile: mirror?.file ?? login.file,
      maxRetries: config.models.max_retries,
      approvalTimeoutSecs: config.agents.approval_timeout_secs,
      resume,
    },
    policy,
  );
  for (const f of launch.files) {
    mkdirSync(dirname(join(configDir, f.path)), { recursive: true });
    writeFileSync(join(configDir, f.path), f.content, { mode: 0o600 });
  }
  // The person's login by reference: a link, so a token the CLI refreshes is refreshed for everyone.
  for (const l of launch.links ?? []) {
    mkdirSync(dirname(join(configDir, l.path)), { recursive: true });
    rmSync(join(configDir, l.path), { force: true });
    symlinkSync(l.target, join(configDir, l.path));
  }
  log.info({ login: login.via }, 'vendor CLI login');
  traceMark('shim: CLI settings written');

  // The CLI, its hooks and its MCP server find their agent by ancestry; these are hints and PATH.
  // Without TMUX and other providers' keys: the CLI hands its environment to every command it runs.
  const childEnv = vendorCliEnvironment(
    config,
    runtime.name,
    { ...env, ...agentEnvironment(layout, rec, env.PATH), ...launch.env },
    definition.passEnv ?? [],
  );
  delete childEnv.FLOTILLA_SLOT;
  // A vendor CLI gets a secret only as the person's own CLI would (docs/runtimes.md): its own
  // definition's keys from the spawner's environment, never another key's variable that a tmux
  // server started with it exported hands every window (the CLI would pass it to every command).
  const { secretSource, secretSourceVars, secretVarName } = await import('../../secrets/keys.js');
  const own = rec.effectivePolicy.secrets;
  const keep = new Set(
    own.flatMap((k) => {
      const src = secretSource(k, config);
      return ['env' in src ? src.env : '', secretVarName(k, config)];
    }),
  );
  for (const name of secretSourceVars(
    (opts.secretKeys ?? []).filter((k) => !own.includes(k)),
    config,
  ))
    if (!keep.has(name)) delete childEnv[name];
  if (viaDoor) {
    const door = await openAgentDoor(layout, config, rec, sendAs(layout, config, rec), {
      env: { ...childEnv, ...busCreds },
      writable: [rec.cwd, configDir],
      extra: VENDOR_DOOR_COMMANDS,
    });
    if (!door) {
      const why = `cannot open the agent's door at ${layout.door(rec.id)} (a path over the Unix socket limit?) — the CLI cannot reach the bus without it; use a shorter fleet root`;
      process.stderr.write(`flotilla: ${why}\n`);
      await finishOnce('failed', why);
      return 1;
    }
    Object.assign(childEnv, doorEnv);
  }
  // With a task the record stays `starting` until the CLI's turn-start hook marks it `working`:
  // the task's clock (timeout_secs) runs from then, never from the CLI's own start-up.
  if (!prompt.trim()) rec = updateRecord(layout, rec.id, { status: 'idle' });

  const early = ending as Ending | null; // set by a signal during the awaits above
  if (early) {
    mirror?.close();
    await finishOnce(early.status, early.reason);
    return 1;
  }
  let exited: StartedCli['exited'];
  try {
    if (bwrap) {
      const cli = await containCli({
        layout,
        config,
        rec,
        bwrap,
        runtime: runtime.name,
        shimEnv: env,
        cliEnv: childEnv,
        configDir,
        bin,
        argv: launch.argv,
        folderSettings,
        loginDir: mirror?.dir,
      });
      traceMark('shim: sandbox planned, door open');
      ({ exited } = await startContained(cli, rec.cwd, (c) => {
        child = c;
        // Ended while a refused start was made again: the new one ends too.
        if (ending) c.kill('SIGTERM');
      }));
    } else {
      const c = spawn(bin, launch.argv, { stdio: 'inherit', cwd: rec.cwd, env: childEnv });
      child = c;
      exited = new Promise((resolve) => {
        c.once('exit', (code, signal) => resolve({ code, signal }));
        c.once('error', () => resolve({ code: 127, signal: null }));
      });
    }
  } catch (err) {
    mirror?.close();
    await finishOnce('failed', `could not start ${runtime.title}: ${(err as Error).message}`);
    return 1;
  }
  traceMark('shim: CLI started');
  // What tends the running CLI loads only now, while the CLI itself starts: off the path to its first request.
  const [{ tendIdleCli }, { openRestricted }, { enforceLimits }, { watchSession }, { endVendorTask }, { cliFate }] =
    await Promise.all([
      import('./idle.js'),
      import('./restricted-open.js'),
      import('./limits.js'),
      import('./session-watch.js'),
      import('./task-end.js'),
      import('./cli-fate.js'),
    ]);
  log.info({ bin, argv: launch.argv, runtime: runtime.name }, 'vendor CLI started');

  const pane = readRecord(layout, rec.id)?.tmux ?? null;
  const typist = pane ? await (await import('./typist.js')).paneTypist(pane, configDir, runtime.pasteGuardMs) : null;
  // An untrusted folder: the CLI's folder screen is answered "open restricted", never "trust" (until a turn begins).
  if (pane && !trusted)
    void openRestricted(runtime, pane, log, () => ending !== null || readRecord(layout, rec.id)?.status === 'working');
  if (runtime.promptAfterMcp && prompt.trim()) {
    // The CLI would send an argv prompt before its MCP servers are connected, without the fleet tools.
    void firstPrompt(configDir, prompt, typist, log);
  }
  const waker = await tendIdleCli({
    layout,
    config,
    runtime,
    rec,
    typist,
    log,
    configDir,
    onLost: (reason) => stop(reason),
    hookContext: {
      agentId: rec.id,
      agentName: definition.name,
      parentId: rec.parentId,
      cwd: rec.cwd,
      onWarn: (m: string) => log.warn({}, m),
    },
  });
  // A question the CLI asks in its own pane is in the fleet's queue too: the first answer wins (cli-host/pane-question.ts).
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
  // The fleet's limits (docs/runtimes.md, "Limits"): the CLI's answers counted from its session file.
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
    endAgent: (reason) => stop(reason, 'completed'),
  });
  // Fail fast (docs/runtimes.md): a refused credential ends the agent, any other API error the task.
  const session = watchSession(runtime, configDir, {
    onModel: () => limits.onModel(),
    onFailure: (failure) => {
      log.warn({ reason: failure.reason, auth: failure.auth }, 'the vendor API ended a turn with an error');
      if (failure.auth) {
        process.stderr.write(`\nflotilla: ${failure.reason} — the agent ends failed\n`);
        stop(failure.reason, 'failed');
        return;
      }
      void endVendorTask(layout, config, rec.id, { status: 'failed', text: '', reason: failure.reason });
    },
  });

  const { code, signal } = await exited;
  mirror?.close();
  session.close();
  limits.close();
  await questions?.close();
  await waker.close();
  const fate = ending ?? cliFate(runtime, code, signal, !!bwrap);
  await finishOnce(fate.status, fate.reason);
  return fate.status === 'completed' ? 0 : 1;
}

/** The first task, typed once the CLI's fleet tools are connected (≤ 30 s), as a person would. */
async function firstPrompt(
  configDir: string,
  prompt: string,
  typist: Typist | null,
  log: { warn(o: object, m: string): void },
): Promise<void> {
  if (!typist) return;
  const ready = join(configDir, 'mcp-ready');
  const end = Date.now() + 30_000;
  while (!existsSync(ready) && Date.now() < end) await sleep(50);
  if (!existsSync(ready)) log.warn({}, 'the fleet MCP server did not answer within 30 s; sending the task anyway');
  // The input box mounts a moment after the MCP connection.
  await sleep(500);
  // A window closed meanwhile: the agent is ending, and the shim's signal handler finishes it.
  await typist.submit(prompt.trim()).catch((err: unknown) => log.warn({ err: String(err) }, 'could not type the task'));
}

function onceAsync<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  let p: Promise<void> | undefined;
  return (...args: A) => (p ??= fn(...args));
}

function readTask(layout: Layout, id: string): string {
  try {
    return readFileSync(layout.taskFile(id), 'utf8');
  } catch {
    return '';
  }
}
