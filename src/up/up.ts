import { basename } from 'node:path';
import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import { newAgentId } from '../fleet/ids.js';
import { ensureGitignore, type Layout } from '../layout/layout.js';
import { CLI_ENTRY, DEMO_SCRIPT, TOOLS_DIR } from '../layout/package.js';
import { resolveModelSpec } from '../model/spec.js';
import type { RuntimeName } from '../runtimes/types.js';
import { Tmux, socketArgs, tmuxSocket, type PaneInfo } from '../tmux/client.js';
import { currentTmux } from '../tmux/current.js';
import { prepareFleetSession } from '../tmux/fleet-session.js';
import { fleetSessionName } from '../tmux/session-name.js';
import { providerKeyVars } from '../tools/command-env.js';
import { DEMO_ENV } from '../definitions/demo.js';
import { DEMO_LEAD, DEMO_TASK, removeInstalledDemoAgents } from './demo.js';
import { withUpLock } from './up-lock.js';

/**
 * `flotilla up` (§2): the fleet's tmux session with a `dashboard` window (`flotilla watch`)
 * and a `root` window (an interactive agent). Idempotent: a second run finds the session
 * and only puts back what is missing (a closed dashboard, a root whose process ended), so
 * there is never a second session or a duplicate window.
 */

export const DASHBOARD_WINDOW = 'dashboard';
/** The scheduler's window (`flotilla scheduler`), opened when the fleet has schedules (§5.10). */
export const SCHEDULE_WINDOW = 'schedule';
export const ROOT_WINDOW = 'root';

export interface UpOptions {
  layout: Layout;
  config: Config;
  env?: NodeJS.ProcessEnv;
  /** The root's model (`--model`). */
  model?: string | undefined;
  /** The root's definition (`--agent`); default: `agents.default`, or the demo lead. */
  agent?: string | undefined;
  /** A first task for the root (`--prompt`); the demo has its own. */
  prompt?: string | undefined;
  /** Told when another `up` is opening this fleet and this one waits for it. */
  onWait?: () => void;
  /** What runs the root (`--runtime`, §13): a vendor CLI root is never the demo. */
  runtime?: RuntimeName | undefined;
}

export interface UpResult {
  session: string;
  socket: string | null;
  /** The session was made by this call (false: it was there and was reused). */
  created: boolean;
  dashboard: { windowId: string; created: boolean };
  root: { windowId: string; id: string | null; created: boolean };
  /**
   * The offline demo runs (no model configured); `removed`: demo files an older version had installed into
   * `.flotilla/agents/`.
   */
  demo: { removed: string[] } | null;
  /** How a person attaches from a shell. */
  attachCommand: string;
}

export async function fleetUp(opts: UpOptions): Promise<UpResult> {
  // Two `up` at once would both find no root and open two.
  return withUpLock(opts.layout, () => openFleet(opts), opts.onWait ? { onWait: opts.onWait } : {});
}

async function openFleet(opts: UpOptions): Promise<UpResult> {
  const { layout, config } = opts;
  const env = opts.env ?? process.env;
  const socket = tmuxSocket(config.tmux.socket, env);
  const tmux = new Tmux({ socket, hideEnv: providerKeyVars(config) });
  const { tmuxPreflight } = await import('../spawn/launch.js');
  await tmuxPreflight(config, env);

  const session = fleetSessionName(config.tmux.session_prefix, layout.project);
  const dashboardArgv = [process.execPath, CLI_ENTRY, '--root', layout.root, 'watch'];
  const sessionEnv = passEnv(layout, config, env);
  let created = false;
  let dashboard: UpResult['dashboard'];
  if (!(await tmux.hasSession(session))) {
    try {
      const ref = await tmux.newSession({
        name: session,
        windowName: DASHBOARD_WINDOW,
        command: dashboardArgv,
        cwd: layout.project,
        env: sessionEnv,
      });
      created = true;
      dashboard = { windowId: ref.windowId, created: true };
    } catch (err) {
      // Someone else (a spawn from a shell, a second `up`) made it first: use theirs.
      if (!(await tmux.hasSession(session))) throw err;
      dashboard = await ensureWindow(tmux, session, DASHBOARD_WINDOW, dashboardArgv, layout, sessionEnv);
    }
  } else {
    dashboard = await ensureWindow(tmux, session, DASHBOARD_WINDOW, dashboardArgv, layout, sessionEnv);
  }

  await prepareFleetSession(tmux, session);

  const wantsDemo =
    resolveModelSpec({ flag: opts.model, config, env, demoScript: DEMO_SCRIPT }).source === 'demo' &&
    !opts.agent &&
    (opts.runtime ?? 'flotilla') === 'flotilla';
  let demo: UpResult['demo'] = null;
  // A fleet root made by an older version has a .gitignore that did not ignore itself.
  ensureGitignore(layout);
  let root: UpResult['root'];
  const existing = await liveWindow(tmux, session, ROOT_WINDOW);
  if (existing) {
    root = { windowId: existing.windowId, id: null, created: false };
  } else {
    if (wantsDemo) demo = { removed: removeInstalledDemoAgents(layout) };
    root = await openRoot(tmux, opts, session, wantsDemo, env);
  }
  // Put back after a crash, like the dashboard: the scheduler picks up where it left off.
  if (await hasSchedules(layout, config)) {
    // The scheduler spawns runs, which take their keys from it: given to its window's process
    // only (`new-window -e`), not to the session's environment.
    const keys = Object.fromEntries(providerKeyVars(config).flatMap((k) => (env[k] ? [[k, env[k]]] : [])));
    await ensureWindow(
      tmux,
      session,
      SCHEDULE_WINDOW,
      [process.execPath, CLI_ENTRY, '--root', layout.root, 'scheduler'],
      layout,
      { ...sessionEnv, ...keys },
      false,
    );
  }
  // A person arriving sees the tree first; Enter on the root opens its window.
  await tmux.selectWindow(dashboard.windowId).catch(() => undefined);
  return { session, socket, created, dashboard, root, demo, attachCommand: attachCommand(socket, session) };
}

/** Whether the fleet has a schedule: added with `flotilla schedule add`, or in a definition's `schedule:` block. */
async function hasSchedules(layout: Layout, config: Config): Promise<boolean> {
  const { listSchedules } = await import('../schedule/store.js');
  if (listSchedules(layout).schedules.length > 0) return true;
  const { loadDefinitions } = await import('../definitions/load.js');
  return (await loadDefinitions({ layout, config })).definitions.some((d) => (d.schedules?.length ?? 0) > 0);
}

/**
 * Attaches this terminal to the session, or moves the tmux client there when already inside tmux on the same server.
 */
export async function attachFleet(
  result: UpResult,
  env: NodeJS.ProcessEnv = process.env,
): Promise<'switched' | 'attached' | 'elsewhere'> {
  const tmux = new Tmux({ socket: result.socket });
  const here = await currentTmux(env);
  if (here) {
    if (!sameServer(here.socketPath, result.socket)) return 'elsewhere';
    await tmux.switchClient(`=${result.session}`);
    return 'switched';
  }
  const code = await tmux.attachSession(`=${result.session}`);
  if (code !== 0)
    throw new FlotillaError(`tmux attach ended with status ${code} — attach yourself with: ${result.attachCommand}`);
  return 'attached';
}

export function attachCommand(socket: string | null, session: string): string {
  return ['tmux', ...socketArgs(socket), 'attach', '-t', session].join(' ');
}

/** Whether `$TMUX`'s server is the one `socket` selects (null = the caller's own). */
export function sameServer(currentSocketPath: string, socket: string | null): boolean {
  if (!socket) return true;
  return socket.startsWith('/') ? socket === currentSocketPath : basename(currentSocketPath) === socket;
}

async function openRoot(
  tmux: Tmux,
  opts: UpOptions,
  session: string,
  demo: boolean,
  env: NodeJS.ProcessEnv,
): Promise<UpResult['root']> {
  const { layout, config } = opts;
  const { spawnAgent } = await import('../spawn/spawn.js');
  // The root opens in the fleet session whatever terminal `up` runs in, so $TMUX is not passed on.
  const spawnEnv: NodeJS.ProcessEnv = { ...env };
  delete spawnEnv.TMUX;
  delete spawnEnv.TMUX_PANE;
  // The demo's tree loads the demo's built-in definitions (definitions/demo.ts); nothing else does.
  if (demo) spawnEnv[DEMO_ENV] = '1';
  else delete spawnEnv[DEMO_ENV];
  const rec = await spawnAgent(
    layout,
    config,
    {
      agent: demo ? DEMO_LEAD : opts.agent,
      id: demo ? newAgentId('lead') : undefined,
      prompt: demo ? DEMO_TASK : (opts.prompt ?? ''),
      model: opts.model,
      runtime: demo ? undefined : opts.runtime,
      mode: 'interactive',
      cwd: layout.project,
    },
    { parent: null, env: spawnEnv },
  );
  if (!rec.tmux)
    throw new FlotillaError(
      `the root agent '${rec.id}' opened without a tmux window — run 'flotilla status' and 'flotilla doctor'`,
    );
  if (rec.tmux.sessionId !== (await tmux.display('#{session_id}', `=${session}:`))) {
    throw new FlotillaError(
      `the root agent '${rec.id}' opened outside the fleet session '${session}' — attach to it with 'flotilla attach ${rec.id}'`,
    );
  }
  await tmux.run(['rename-window', '-t', rec.tmux.windowId, ROOT_WINDOW]);
  return { windowId: rec.tmux.windowId, id: rec.id, created: true };
}

/** The window of that name in the session, or a new one running `argv`. A dead pane is replaced. */
async function ensureWindow(
  tmux: Tmux,
  session: string,
  name: string,
  argv: string[],
  layout: Layout,
  env: Record<string, string>,
  first = true,
): Promise<{ windowId: string; created: boolean }> {
  const live = await liveWindow(tmux, session, name);
  if (live) return { windowId: live.windowId, created: false };
  const ref = await tmux.newWindow({ target: `=${session}`, name, command: argv, cwd: layout.project, env });
  // The dashboard goes first, where a person looks.
  if (first) await tmux.exec(['move-window', '-b', '-s', ref.windowId, '-t', `=${session}:^`]);
  return { windowId: ref.windowId, created: true };
}

/** The first window named `name` whose pane still runs; windows of that name with a dead pane are closed. */
async function liveWindow(tmux: Tmux, session: string, name: string): Promise<PaneInfo | undefined> {
  const panes = (await tmux.listPanes(`=${session}`)).filter((p) => p.windowName === name);
  for (const p of panes.filter((x) => x.dead)) await tmux.killWindow(p.windowId).catch(() => undefined);
  return panes.find((p) => !p.dead);
}

/**
 * What the dashboard (and, through the session, every window opened in it later) needs from
 * this environment: the fleet root, Flotilla's own settings and the config home — a tmux
 * server started earlier would otherwise hand new windows its old environment. Never the
 * model keys: the session environment is tmux's, which every window and
 * `tmux show-environment` can read (docs/security-shell.md "Keys on request only").
 */
export function passEnv(layout: Layout, config: Config, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  const identity = new Set([
    'FLOTILLA_AGENT_ID',
    'FLOTILLA_DEPTH',
    'FLOTILLA_PARENT_ID',
    'FLOTILLA_SLOT',
    'FLOTILLA_NODE',
    'FLOTILLA_CLI',
    DEMO_ENV,
  ]);
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if ((k.startsWith('FLOTILLA_') && !identity.has(k)) || k === 'XDG_CONFIG_HOME') out[k] = v;
  }
  out.FLOTILLA_ROOT = layout.root;
  // A window a person opens in the fleet session finds `flotilla` and `spawn-agent`.
  out.PATH = [TOOLS_DIR, ...(env.PATH ?? '').split(':').filter((p) => p && p !== TOOLS_DIR)].join(':');
  return out;
}
