import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Log } from '../../audit/logger.js';
import type { Config } from '../../config/schema.js';
import type { AgentRecord } from '../../fleet/record.js';
import { DOOR_BUS_ENV, DOOR_ENV } from '../../inbox/door.js';
import type { Layout } from '../../layout/layout.js';
import { CLI_ENTRY, TOOLS_DIR } from '../../layout/package.js';
import { findRuntimeBinary } from '../../runtimes/binary.js';
import type { Runtime } from '../../runtimes/index.js';
import { planLogin, type LoginPlan } from '../../runtimes/login.js';
import type { Launch } from '../../runtimes/types.js';
import { shellCommand } from '../../tmux/quote.js';
import { busCredentials } from '../../tools/command-env.js';
import { traceMark } from '../../trace.js';
import { cliFolderTrusted, untrustedFolderSettings } from './folder-trust.js';
import { mirrorLogin, type LoginMirror } from './login-mirror.js';
import { cliSandbox } from './sandboxed-cli.js';

/** Why the CLI cannot start, said in the pane; the agent ends `failed` with it. */
export class CliRefused extends Error {}

/** Everything the shim settled before starting the CLI: where it runs, how it reaches the fleet, its argv. */
export interface PreparedCli {
  bin: string;
  login: LoginPlan;
  /** The agent's own config folder for the CLI (state/runtimes/<id>/). */
  configDir: string;
  /** The bwrap the CLI runs in; none outside the sandbox. */
  bwrap: string | undefined;
  /** Outside the sandbox on a bus that needs credentials: the CLI reaches the fleet through the door too. */
  viaDoor: boolean;
  busCreds: Record<string, string>;
  /** What the CLI's hooks and MCP server are told to find the fleet through the door. */
  doorEnv: Record<string, string>;
  trusted: boolean;
  /** The untrusted folder's own settings the sandbox hides. */
  folderSettings: string[];
  mirror: LoginMirror | undefined;
  launch: Launch;
}

/**
 * Prepares the CLI's start (§13): its binary and login, the session it resumes, whether it runs
 * in the sandbox, its model catalogue, the folder's trust, and its settings written into the
 * agent's config folder. Throws CliRefused when it cannot start as asked.
 */
export async function prepareCli(d: {
  layout: Layout;
  config: Config;
  rec: AgentRecord;
  runtime: Runtime;
  env: NodeJS.ProcessEnv;
  log: Log;
  prompt: string;
  /** One line in the agent's pane (CliPane.say). */
  say: (line: string) => void;
}): Promise<PreparedCli> {
  const { layout, config, rec, runtime, env, log } = d;
  const { bin, login } = await binaryAndLogin(layout, config, runtime, env);
  const configDir = layout.runtimeDir(rec.id);
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  const resume = rec.resumedFrom ? await carryOver(layout, runtime, rec, configDir) : undefined;
  const place = fleetPlace(layout, config, rec, env, runtime, log, d.say);
  const model = rec.model.startsWith(`${rec.runtime}:`)
    ? rec.model.slice(rec.runtime.length + 1) || undefined
    : undefined;
  // An older model may have a migration dialog to answer before its first turn, and the CLI's
  // own sub-agents are turned off in the catalogue it is given (docs/runtimes.md, "First-run answers").
  traceMark('shim: login and binary checked');
  const [catalog, untested] = await Promise.all([
    (await import('../../runtimes/model-catalog.js')).fleetCatalog(layout, runtime, bin, env, configDir),
    (await import('./cli-version.js')).untestedVersionNotice(layout, runtime, bin, env),
  ]);
  // Said once, in the pane, before the CLI draws: a new prompt of an untested CLI looks like a hung agent.
  if (untested) {
    d.say(`flotilla: ${untested}`);
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
  if (folderSettings.length && !place.bwrap) {
    const why = `${runtime.title} would load ${folderSettings.join(', ')} (this untrusted folder's own hooks and commands) and no sandbox hides it: 'flotilla trust' the project if it is yours, or use security.sandbox auto with bubblewrap installed`;
    log.warn({ folderSettings }, why);
    throw new CliRefused(why);
  }
  // In the sandbox the CLI refreshes its shared login in a copy the shim writes back (login-mirror.ts).
  let mirror: LoginMirror | undefined;
  try {
    mirror =
      place.bwrap && login.file && existsSync(login.file)
        ? mirrorLogin(login.file, layout.loginMirror(rec.id), log)
        : undefined;
  } catch (err) {
    throw new CliRefused(
      `cannot share the login ${login.file ?? ''} with the sandboxed CLI: ${(err as Error).message}`,
    );
  }
  const launch = runtime.launch(
    {
      id: rec.id,
      cwd: rec.cwd,
      trusted,
      configDir,
      // A resumed Claude's task is typed once its fleet tools are listed (cli-tend.ts, Runtime.firstTurnWaitsForMcp).
      prompt: runtime.firstTurnWaitsForMcp && rec.resumedFrom ? '' : d.prompt,
      mcp:
        place.bwrap || place.viaDoor
          ? { command: 'sh', args: ['-c', perlOrNode('door-pipe', 'mcp', place.cli, ['mcp'])], env: place.doorEnv }
          : { command: process.execPath, args: [...place.cli.slice(1), 'mcp'] },
      hookCommand: (event) =>
        place.bwrap || place.viaDoor
          ? doorHookCommand(place.cli, event)
          : shellCommand([...place.cli, 'runtime-hook', event]),
      model,
      modelUpgrades: catalog.upgrades,
      modelCatalogFile: catalog.file,
      env,
      loginFile: mirror?.file ?? login.file,
      maxRetries: config.models.max_retries,
      approvalTimeoutSecs: config.agents.approval_timeout_secs,
      resume,
    },
    { tools: rec.effectivePolicy.tools, permissionMode: rec.permissionMode },
  );
  writeLaunchFiles(configDir, launch);
  log.info({ login: login.via }, 'vendor CLI login');
  traceMark('shim: CLI settings written');
  return { bin, login, configDir, ...place, trusted, folderSettings, mirror, launch };
}

/**
 * The CLI's binary and its login, checked at spawn too: the environment may have changed since (docs/runtimes.md,
 * "Logins").
 */
async function binaryAndLogin(
  layout: Layout,
  config: Config,
  runtime: Runtime,
  env: NodeJS.ProcessEnv,
): Promise<{ bin: string; login: LoginPlan }> {
  const settings = config.runtimes[runtime.name];
  const { isTrusted } = await import('../../config/trust-store.js');
  const bin = findRuntimeBinary(runtime, env, {
    command: settings.command,
    project: layout.project,
    projectTrusted: isTrusted(layout, env),
  });
  if (!bin)
    throw new CliRefused(
      `${runtime.title} is not installed — install it (npm install -g ${runtime.npmPackage}) or set ${runtime.binEnv} to its path`,
    );
  const login = planLogin(runtime.name, env, settings.login);
  if ('fix' in login) throw new CliRefused(login.fix);
  return { bin, login };
}

/** `flotilla resume` (§8): the CLI continues the predecessor's own session, and its unread mail is this agent's. */
async function carryOver(layout: Layout, runtime: Runtime, rec: AgentRecord, configDir: string): Promise<string> {
  const [{ carrySession }, { adoptUnread }] = await Promise.all([
    import('./inherited.js'),
    import('../../inbox/adopt.js'),
  ]);
  const carried = carrySession(layout, runtime, rec.resumedFrom!, configDir);
  if ('error' in carried) throw new CliRefused(carried.error);
  adoptUnread(layout, rec.resumedFrom!, rec.id);
  return carried.sessionId;
}

/**
 * Where the CLI runs and how it reaches the fleet. Inside the sandbox its hooks and MCP server
 * reach the fleet through the agent's door, which refuses --root (FLOTILLA_ROOT names the
 * fleet); outside they name it themselves. The bus's credentials are the shim's
 * (docs/security-fleet.md "Bus credentials"): a CLI outside the sandbox on a bus that needs
 * them reaches the fleet through the door as well.
 */
function fleetPlace(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  env: NodeJS.ProcessEnv,
  runtime: Runtime,
  log: Log,
  say: (line: string) => void,
): Pick<PreparedCli, 'bwrap' | 'viaDoor' | 'busCreds' | 'doorEnv'> & { cli: string[] } {
  let bwrap: string | undefined;
  try {
    const sandbox = cliSandbox(config, env, runtime.name, rec.permissionMode);
    bwrap = sandbox.bwrap;
    if (sandbox.outside) {
      say(sandbox.outside);
      log.warn({}, sandbox.outside);
    }
  } catch (err) {
    throw new CliRefused((err as Error).message);
  }
  const busCreds = busCredentials(config, env);
  const viaDoor = !bwrap && Object.keys(busCreds).length > 0;
  const cli = bwrap || viaDoor ? [process.execPath, CLI_ENTRY] : [process.execPath, CLI_ENTRY, '--root', layout.root];
  const doorEnv = {
    FLOTILLA_ROOT: layout.root,
    [DOOR_ENV]: layout.door(rec.id),
    ...(viaDoor ? { [DOOR_BUS_ENV]: '1' } : {}),
  };
  return { bwrap, viaDoor, busCreds, doorEnv, cli };
}

/**
 * The CLI's hook command where its hooks go through the agent's door (in the sandbox, or on a
 * bus whose credentials are the shim's): tools/door-hook forwards the hook as the Node client
 * does (cli/door-forward.ts) without a Node start on every hook.
 */
export function doorHookCommand(cli: readonly string[], event: string): string {
  return perlOrNode('door-hook', event, cli, ['runtime-hook', event]);
}

/**
 * A door client in perl, which every Debian and Ubuntu has (perl-base): `tools/<tool> <first> <node> <cli>`; with no
 * perl, the Node client itself, `<node> <cli> <nodeArgs>`. The MCP server's (tools/door-pipe) lives as long as the
 * agent: in Node it was one more ~45 MB process per vendor agent, started as the CLI starts (§14).
 */
function perlOrNode(tool: string, first: string, cli: readonly string[], nodeArgs: readonly string[]): string {
  const node = shellCommand([...cli, ...nodeArgs]);
  return `command -v perl >/dev/null 2>&1 && exec perl ${shellCommand([join(TOOLS_DIR, tool), first, ...cli])} || exec ${node}`;
}

/**
 * The CLI's settings into its config folder, and the person's login by reference: a link, so a token the CLI refreshes
 * is refreshed for everyone.
 */
function writeLaunchFiles(configDir: string, launch: Launch): void {
  // An earlier CLI's word that the fleet tools were listed (mcp/server.ts): this one's hooks wait for its own.
  rmSync(join(configDir, 'mcp-ready'), { force: true });
  for (const f of launch.files) {
    mkdirSync(dirname(join(configDir, f.path)), { recursive: true });
    writeFileSync(join(configDir, f.path), f.content, { mode: 0o600 });
  }
  for (const l of launch.links ?? []) {
    mkdirSync(dirname(join(configDir, l.path)), { recursive: true });
    rmSync(join(configDir, l.path), { force: true });
    symlinkSync(l.target, join(configDir, l.path));
  }
}
