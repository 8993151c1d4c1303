import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../config/schema.js';
import { errorMessage, FlotillaError } from '../errors.js';
import { isTerminal } from '../fleet/record-status.js';
import type { AgentRecord, TmuxPlace } from '../fleet/record.js';
import { endRecord, readRecord, updateRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { CLI_ENTRY } from '../layout/package.js';
import { sendCompletionOnce } from '../lifecycle/completion.js';
import { sleep } from '../sleep.js';
import { Tmux, tmuxSocket, type NewWindowOptions, type PaneRef } from '../tmux/client.js';
import { currentTmux } from '../tmux/current.js';
import { fleetSessionCommands } from '../tmux/fleet-session.js';
import { runShellCommand, tmuxFormat } from '../tmux/quote.js';
import { fleetSessionName } from '../tmux/session-name.js';
import { tmuxVersionRefusal } from '../tmux/version.js';
import { cachedTmuxVersion } from '../tmux/version-cache.js';
import { paneCommand } from './pane-command.js';
import type { PreparedSpawn } from './prepare.js';
import { busCredentialVars, providerKeyVars } from '../tools/command-env.js';
import { envWithout, withoutVars, writeHarnessKeys } from './harness-keys.js';
import { writeRuntimeEnv } from './runtime-env.js';
import { SHIM_HOST_PID_ENV, shimHostAhead } from './shim-host-process.js';
import { childArgv, childEnvironment, inShimHost } from './child-command.js';
import { addInPlaceBranch } from '../work/in-place.js';
import { addWorktree } from '../work/worktree.js';
import { traceMark } from '../trace.js';

/**
 * Opens a prepared agent (§5.4): a tmux window (or session, or a headless process) running
 * `<node> <cli> run --spawned <id>` as an argv (in a pane, under the sh of pane-command.ts),
 * with the child's environment, then waits until the child holds its running slot. Whatever
 * fails after the record exists ends the record (`failed`, with the reason) so nothing is
 * left `spawning`.
 */

export interface LaunchOptions {
  /**
   * The caller's environment: `$TMUX` decides where the window opens; PATH and FLOTILLA_* settings pass on. Default
   * process.env.
   */
  env?: NodeJS.ProcessEnv;
  /** Its own detached session instead of a window. */
  session?: boolean;
  /** No tmux: a detached headless process writing to its log. */
  background?: boolean;
  /** A git worktree and branch for the child (§12). */
  worktree?: boolean;
}

// How long a live child has to take its slot. Generous: the wait ends as soon as the child
// dies or refuses, so this only bounds a hung child — and a loaded 2-core machine can take
// over 10 s to load a harness (seen in CI).
const HANDOFF_TIMEOUT_MS = 60_000;
const POLL_MS = 100;
/** A variable name a POSIX sh can `unset`. */
const SH_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The refusal for a missing or too old tmux, checked before anything opens (§5.2); the version is kept per tmux
 * binary (tmux/version-cache.ts).
 */
export async function tmuxPreflight(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const tmux = new Tmux({ socket: tmuxSocket(config.tmux.socket, env) });
  const err = tmuxVersionRefusal(await cachedTmuxVersion(() => tmux.version(), env));
  if (err) throw err;
}

export async function launchAgent(
  layout: Layout,
  config: Config,
  prepared: PreparedSpawn,
  opts: LaunchOptions = {},
): Promise<AgentRecord> {
  traceMark('spawn: prepared');
  const env = opts.env ?? process.env;
  let rec = prepared.record;
  let place: TmuxPlace | null = null;
  let tmux: Tmux | null = null;
  let exited: (() => Promise<string | null>) | null = null;
  // A vendor CLI's model catalogue, asked for beside the window's opening and the child's start.
  const catalog =
    rec.runtime === 'flotilla'
      ? undefined
      : import('./catalog-ahead.js').then(
          ({ catalogAhead }) => catalogAhead(layout, config, rec, env),
          () => undefined,
        );
  // The fleet's shim host, started now when none answers, loads beside the window's opening (§14).
  const providerKeys = providerKeyVars(config);
  const bus = busCredentialVars(config);
  const host = inShimHost(layout, rec) ? shimHostAhead(layout, env, [...providerKeys, ...bus]) : undefined;
  try {
    if (opts.worktree) {
      const { path, base } = await addWorktree(layout, rec.id);
      rec = updateRecord(layout, rec.id, { cwd: path, worktree: path, base });
    } else {
      // In place in the project: a branch and a git dir of its own, to commit on (work/in-place.ts).
      const base = await addInPlaceBranch(layout, rec.id, rec.cwd);
      if (base) rec = updateRecord(layout, rec.id, { base });
    }
    // The harness's provider keys and the bus's credentials go through a 0600 file, never tmux
    // (spawn/harness-keys.ts); a vendor CLI's shim takes its CLI's keys its own way (runtime-env.ts).
    const keys = rec.runtime === 'flotilla' ? [...providerKeys, ...bus] : bus;
    const childEnv = childEnvironment(layout, rec, prepared.slot.envValue, env, bus);
    const hostPid = await host;
    if (hostPid) childEnv[SHIM_HOST_PID_ENV] = String(hostPid);
    if (rec.runtime !== 'flotilla') writeRuntimeEnv(layout, rec.id, env);
    writeHarnessKeys(layout, rec.id, env, keys);
    if (opts.background) {
      exited = openHeadless(
        layout,
        rec,
        { ...envWithout(env, keys), ...childEnv },
        withoutVars(childArgv(layout, rec), keys),
      );
    } else {
      traceMark('spawn: opening window');
      let pid: number;
      ({ tmux, place, pid } = await openInTmux(layout, config, rec, childEnv, env, opts.session ?? false, keys));
      traceMark('spawn: window open');
      // Written before the child can write: its first write comes after the slot handoff,
      // which this process answers only once it waits for it (awaitHandoff, below). The child
      // may well be up and asking by now; had it been answered, its `starting` could be lost
      // to this read-modify-write (seen under load: the agent then failed at its next write).
      rec = updateRecord(layout, rec.id, { tmux: place });
      const t = tmux;
      const pane = place.paneId;
      const id = rec.id;
      exited = () => paneExit(t, pane, pid, id);
    }
  } catch (err) {
    prepared.slot.release();
    await failRecord(layout, config, rec.id, `could not open: ${errorMessage(err)}`);
    throw err;
  }

  const outcome = await awaitHandoff(layout, prepared, exited, HANDOFF_TIMEOUT_MS);
  traceMark('spawn: slot handed over');
  // Kept before this process may exit (the shim waits for this answer rather than ask again).
  await catalog;
  if (outcome.ok) return readRecord(layout, rec.id) ?? rec;
  prepared.slot.release();
  if (outcome.ended) {
    const code = outcome.ended.status === 'refused' ? 'refused' : 'start-failed';
    throw new FlotillaError(
      `agent '${rec.id}' ${outcome.ended.status} at startup: ${outcome.ended.exitReason ?? 'no reason given'}`,
      { code },
    );
  }
  if (outcome.timedOut && tmux && place) await tmux.killWindow(place.windowId).catch(() => undefined);
  await failRecord(layout, config, rec.id, outcome.reason);
  throw new FlotillaError(`agent '${rec.id}' did not start: ${outcome.reason} — see ${layout.log(rec.id)}`, {
    code: 'start-failed',
  });
}

async function openInTmux(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  childEnv: Record<string, string>,
  env: NodeJS.ProcessEnv,
  ownSession: boolean,
  keys: readonly string[],
): Promise<{ tmux: Tmux; place: TmuxPlace; pid: number }> {
  // A tool command has no $TMUX (tools/command-env.ts): its agent's child opens beside the agent.
  const current = (await currentTmux(env)) ?? (await parentTmux(layout, rec));
  const socket = current ? current.socketPath : tmuxSocket(config.tmux.socket, env);
  const tmux = new Tmux({ socket, hideEnv: [...providerKeyVars(config), ...keys] });
  const reap = [process.execPath, CLI_ENTRY, '--root', layout.root, 'reap', ...(socket ? ['--socket', socket] : [])];
  const common = {
    // The keys the tmux server's environment may hold are unset by the pane's sh (pane-command.ts).
    command: paneCommand(
      withoutVars(
        childArgv(layout, rec),
        keys.filter((k) => !SH_NAME.test(k)),
      ),
      reap,
      keys.filter((k) => SH_NAME.test(k)),
      { caCertsAside: rec.runtime !== 'flotilla' },
    ),
    cwd: rec.cwd,
    env: childEnv,
    remainOnExit: true,
    paneDiedHook: runShellCommand([...reap, '--pane', tmuxFormat('pane_id')]),
  };
  let ref;
  if (ownSession) {
    ref = await tmux.newSession({ ...common, name: rec.id, windowName: rec.id });
  } else if (current) {
    ref = await tmux.newWindow({ ...common, target: current.sessionId, name: rec.id });
  } else {
    const session = fleetSessionName(config.tmux.session_prefix, layout.project);
    ref = await openInFleetSession(tmux, session, { ...common, name: rec.id });
  }
  const place = { socket, sessionId: ref.sessionId, windowId: ref.windowId, paneId: ref.paneId };
  return { tmux, place, pid: ref.panePid };
}

/** The parent agent's tmux server and session, while that session lives; null for a root or a headless parent. */
async function parentTmux(
  layout: Layout,
  rec: AgentRecord,
): Promise<{ socketPath: string | null; sessionId: string } | null> {
  const place = rec.parentId ? readRecord(layout, rec.parentId)?.tmux : null;
  if (!place) return null;
  try {
    const sessionId = await new Tmux({ socket: place.socket }).display('#{session_id}', place.sessionId);
    return sessionId === place.sessionId ? { socketPath: place.socket, sessionId } : null;
  } catch {
    return null;
  }
}

/**
 * A window in the fleet session, creating the session (detached) when missing; two spawners racing to create it both
 * end up with a window. The window is tried first: with the session there (every spawn but a fleet's first) that is
 * the one tmux run, where asking `has-session` first cost one more (§14). With no server running at all (a fleet's
 * first spawn, mostly) the session is made at once, prepared in the same tmux call.
 */
async function openInFleetSession(
  tmux: Tmux,
  session: string,
  opts: Omit<NewWindowOptions, 'target'>,
): Promise<PaneRef> {
  const window = () => tmux.newWindow({ ...opts, target: `=${session}` });
  if (!tmux.serverAbsent())
    try {
      return await window();
    } catch {
      // There now: another spawner made it meanwhile, or the window failed for another reason, said by its retry.
      if (await tmux.hasSession(session)) return window();
    }
  try {
    // A window a person opens there later finds flotilla and spawn-agent, and is not this agent.
    return await tmux.newSession({
      ...opts,
      name: session,
      windowName: opts.name,
      then: fleetSessionCommands(session),
    });
  } catch (err) {
    if (!(await tmux.hasSession(session))) throw err;
  }
  return window();
}

function openHeadless(
  layout: Layout,
  rec: AgentRecord,
  env: NodeJS.ProcessEnv,
  argv: readonly string[],
): () => Promise<string | null> {
  mkdirSync(dirname(layout.log(rec.id)), { recursive: true });
  const fd = openSync(layout.log(rec.id), 'a');
  let exit: string | null = null;
  try {
    const [node, ...args] = argv;
    const child = spawn(node!, args, { detached: true, stdio: ['ignore', fd, fd], env, cwd: rec.cwd });
    child.once('error', (err) => (exit = `could not start: ${err.message}`));
    child.once('exit', (code, signal) => (exit = signal ? `killed (${signal})` : `exited with status ${code ?? '?'}`));
    child.unref();
  } finally {
    closeSync(fd);
  }
  return () => Promise.resolve(exit);
}

/**
 * Why a pane's process has ended (its last line of output), or null while it runs. While /proc shows its process (the
 * sh of pane-command.ts, `pid`) running this agent, tmux is not asked: a `display-message` every poll cost the
 * spawner a fork each (§14). Anything else (the sh gone or a zombie, a pid namespace or a system without /proc) is
 * asked of tmux as before.
 */
async function paneExit(tmux: Tmux, pane: string, pid: number, id: string): Promise<string | null> {
  if (paneShRuns(pid, id)) return null;
  const r = await tmux.exec(['display-message', '-p', '-t', pane, '#{pane_dead} #{pane_dead_status}']);
  if (r.code !== 0) return 'its window was closed';
  const [dead, status] = r.stdout.trim().split(' ');
  if (dead !== '1') return null;
  const text = await tmux.capturePane(pane, { start: 'history' }).catch(() => '');
  const last = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^Pane is dead/.test(l))
    .at(-1);
  return `exited with status ${status || '?'}${last ? `: ${last}` : ''}`;
}

/** True while `pid` is this agent's pane sh, running: its argv (pane-command.ts) read from /proc, with no fork. */
function paneShRuns(pid: number, id: string): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const ours = argv.endsWith(`\0--spawned\0${id}\0`) || (argv.includes('/shim-pane\0') && argv.endsWith(`\0${id}\0`));
    return argv.includes('\0flotilla-pane\0') && ours;
  } catch {
    return false;
  }
}

type Outcome =
  | { ok: true }
  | { ok: false; ended: AgentRecord }
  | { ok: false; ended?: undefined; reason: string; timedOut: boolean };

/** Waits for the slot handoff, but gives up early when the child ends (refused) or its process dies. */
async function awaitHandoff(
  layout: Layout,
  prepared: PreparedSpawn,
  exited: (() => Promise<string | null>) | null,
  timeoutMs: number,
): Promise<Outcome> {
  let handed: boolean | null = null;
  const handoff = prepared.slot.waitForHandoff(timeoutMs).then((ok) => (handed = ok));
  for (;;) {
    await Promise.race([handoff, sleep(POLL_MS)]);
    if (handed === true) return { ok: true };
    const rec = readRecord(layout, prepared.record.id);
    if (rec && isTerminal(rec.status)) return { ok: false, ended: rec };
    if (handed === false)
      return {
        ok: false,
        reason: `it did not take its running slot within ${Math.round(timeoutMs / 1000)} s`,
        timedOut: true,
      };
    const why = exited ? await exited() : null;
    if (why) {
      // The child may have written its own end just before dying.
      const again = readRecord(layout, prepared.record.id);
      if (again && isTerminal(again.status)) return { ok: false, ended: again };
      return { ok: false, reason: why, timedOut: false };
    }
  }
}

/** Ends a record the child never took over, and tells its parent (once). */
async function failRecord(layout: Layout, config: Config, id: string, reason: string): Promise<void> {
  try {
    const { record, ended } = endRecord(layout, id, { status: 'failed', exitReason: reason });
    if (!ended) return;
    await sendCompletionOnce(
      layout,
      record,
      {
        task: record.task,
        status: 'failed',
        exitReason: reason,
        finishedAt: record.finishedAt ?? new Date().toISOString(),
        outputPath: null,
      },
      { text: reason, maxBodyBytes: config.inbox.max_body_bytes },
    );
  } catch {
    // The spawner reports the failure itself; the record is best effort.
  }
}
