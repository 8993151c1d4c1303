import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import type { AgentRecord } from '../fleet/record.js';
import { sentReply, type Sent } from '../lifecycle/send.js';
import type { Layout } from '../layout/layout.js';
import { FlotillaError } from '../errors.js';
import { SYSTEM_KIND_REFUSAL } from '../inbox/address.js';
import type { Socket } from 'node:net';
import {
  DOOR_BUS_COMMANDS,
  DOOR_COMMANDS,
  DOOR_PIPE_COMMANDS,
  type DoorPipe,
  type DoorRun,
  type DoorRunResult,
} from '../inbox/door.js';
import { CLI_ENTRY } from '../layout/package.js';
import { traceMark } from '../trace.js';
import { chunksUsed } from '../start-done.js';
import type { FleetHookEvent, VendorRuntimeName } from '../runtimes/types.js';

export interface OutgoingMessage {
  to: string;
  body: string;
  summary?: string | undefined;
  priority?: 'low' | 'normal' | 'high' | 'urgent' | undefined;
  kind?: 'message' | 'system' | undefined;
  inReplyTo?: string | undefined;
}

/**
 * Delivery as this agent (§4): `from` is always its id; `to` is resolved from its record, or
 * names a group (a broadcast, its policy checked as this agent's).
 */
export function sendAs(layout: Layout, config: Config, rec: AgentRecord): (m: OutgoingMessage) => Promise<Sent> {
  return async (m) => {
    const { sendTo } = await import('../lifecycle/send.js');
    return sendTo(
      layout,
      m.to,
      {
        from: rec.id,
        kind: m.kind ?? 'message',
        body: m.body,
        ...(m.summary ? { summary: m.summary } : {}),
        ...(m.priority ? { priority: m.priority } : {}),
        ...(m.inReplyTo ? { in_reply_to: m.inReplyTo } : {}),
      },
      { maxBodyBytes: config.inbox.max_body_bytes, allWho: config.inbox.broadcast_all },
    );
  };
}

/** What the harness needs to run a door `run` as its own child: where and with what environment. */
export interface DoorRunContext {
  /**
   * The environment the agent's commands get (no secrets: a grant is lent to one shell call
   * only), with the bus's credentials the commands themselves do not get.
   */
  env: NodeJS.ProcessEnv;
  /**
   * Directories the agent may work in; a caller's cwd elsewhere (the sandbox's private /tmp) becomes the agent's cwd.
   */
  writable: readonly string[];
  /** Commands this door runs beyond DOOR_COMMANDS (a vendor CLI's shim: its hooks, VENDOR_DOOR_COMMANDS). */
  extra?: ReadonlySet<string>;
  /**
   * Answer the CLI's hooks (`runtime-hook <event>`, a vendor CLI's shim) in this process, the agent's own: a hook is on
   * the path of every turn (a task, a wake-up for mail, each tool call), and a process per hook was a Node start each
   * time, or a ~48 MB spare kept started ahead. A `permission` hook, which waits for a person and stops when its CLI
   * stops it, still runs as its own child (approvals/hosted-cli.ts).
   */
  hooksHere?: boolean;
  /**
   * The MCP server's and the hooks' modules load once this resolves true (a vendor CLI's shim: its CLI was exec'd),
   * never if false: loaded before, they were on the path to the CLI's exec. They still load while the CLI starts,
   * before it can ask the door for either.
   */
  warmAfter?: Promise<boolean>;
}

/** The doors this process opened, by path: a shim host closes each as its agent ends (`closeAgentDoor`). */
const openDoors = new Map<string, () => void>();

/** Closes the agent's door, if this process opened it: its socket goes, its open connections stay theirs. */
export function closeAgentDoor(layout: Layout, agentId: string): void {
  const path = layout.door(agentId);
  openDoors.get(path)?.();
  openDoors.delete(path);
}

/**
 * Opens the agent's door (inbox/door.ts) for its commands, in every sandbox mode, and makes
 * the secrets folder exist so every sandbox can hide it (a handoff socket answers whoever
 * connects). Undefined when the socket cannot be made (a path over the Unix socket limit):
 * `flotilla send` then delivers itself, with the fleet's redaction (cli/commands/send.ts).
 */
export async function openAgentDoor(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  send: (m: OutgoingMessage) => Promise<Sent>,
  runCtx: DoorRunContext,
): Promise<string | undefined> {
  mkdirSync(layout.secretsDir, { recursive: true, mode: 0o700 });
  const { openDoor } = await import('../inbox/door.js');
  // A vendor CLI's shim: what its CLI asks the door for first. Only ahead of time: what fails to load here fails
  // again, and says so, when the CLI asks (a rejection left unhandled would end the shim).
  const warm = () => {
    if (!runCtx.hooksHere) return;
    Promise.all([
      import('../mcp/server.js'),
      import('./cli-host/hook-warm.js').then((m) => m.preloadRuntimeHook(rec.runtime as VendorRuntimeName)),
    ]).catch(() => undefined);
  };
  if (runCtx.warmAfter) void runCtx.warmAfter.then((started) => started && warm());
  else warm();
  try {
    const door = await openDoor(
      layout.door(rec.id),
      config.inbox.max_body_bytes + 64 * 1024,
      async (req, closed) => {
        if (req.op === 'whoami') return { id: rec.id };
        if (req.op === 'run') return { ...(await runForAgent(layout, rec, req, runCtx, closed)) };
        // `kind: system` is Flotilla's own word (docs/security-fleet.md "Framing"): an agent's command never gets to
        // say it.
        if (req.kind === 'system') throw new FlotillaError(SYSTEM_KIND_REFUSAL, { code: 'system-kind', exitCode: 1 });
        return sentReply(
          await send({
            to: req.to,
            body: req.body,
            summary: req.summary,
            priority: req.priority,
            kind: 'message',
            inReplyTo: req.in_reply_to,
          }),
        );
      },
      (req, sock, rest) => void pipeForAgent(layout, config, rec, req, runCtx, sock, rest),
    );
    openDoors.set(door.path, door.close);
    return door.path;
  } catch {
    return undefined;
  }
}

/**
 * Runs `flotilla <args>` for the agent, as the harness's own child on the host: the process
 * ancestry makes the agent its caller, so a spawn is this agent's child (its depth, caps and
 * budget) and every refusal is the one the agent would get from its own shell without a
 * sandbox. What the caller chooses is only the arguments: the environment is the one the
 * harness gives its commands and the fleet root is the harness's (`--root` is refused), so
 * nothing inside can point the command at another fleet or run code of its choosing on the
 * host (docs/security.md "The door").
 */
function runForAgent(
  layout: Layout,
  rec: AgentRecord,
  req: DoorRun,
  ctx: DoorRunContext,
  closed: AbortSignal,
): Promise<DoorRunResult> {
  // The command's name comes first: the program's one option of its own is --root, refused below.
  const name = req.args[0];
  const allowed = new Set([...DOOR_COMMANDS, ...DOOR_BUS_COMMANDS, ...(ctx.extra ?? [])]);
  if (!name || !allowed.has(name)) {
    throw new FlotillaError(
      `the door runs only ${[...allowed].join(', ')} — '${name ?? ''}' runs in the sandbox itself, or is a person's to run`,
      { code: 'door-command', exitCode: 2 },
    );
  }
  refuseRoot(req.args);
  // `run --spawned <id>` is how a spawn starts a registered agent's harness: a person's spawn's, never a command's.
  const internal = name === 'run' && req.args.find((a) => /^--(spawned|shim-host|shim-host-start)(=|$)/.test(a));
  if (internal) {
    throw new FlotillaError(
      `${internal.split('=')[0]} is internal to spawn-agent and is refused through the door — use flotilla run "<task>" or spawn-agent`,
      { code: 'door-spawned', exitCode: 2 },
    );
  }
  // `spawn --lineage` is how another host's Flotilla makes an agent's child here (§17.5): never an agent's word.
  if (name === 'spawn' && req.args.some((a) => a === '--lineage' || a.startsWith('--lineage='))) {
    throw new FlotillaError(
      '--lineage is refused through the door: it is written by Flotilla for a spawn on another host — drop it; spawn-agent --host NAME makes your child there',
      { code: 'door-lineage', exitCode: 2 },
    );
  }
  const { cwd, env } = hostPlace(layout, rec, req.cwd, ctx);
  const event = name === 'runtime-hook' && req.args.length === 2 ? req.args[1] : undefined;
  if (event !== undefined && event !== 'permission' && ctx.hooksHere) return answerHook(layout, rec, event, req, env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...req.args], {
      cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      signal: closed,
      killSignal: 'SIGTERM',
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.stdin.on('error', () => undefined);
    child.stdin.end(req.stdin ?? '');
    child.on('error', (e) => {
      if (!closed.aborted) reject(e);
    });
    child.on('close', (code, signal) => {
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exitCode: code ?? (signal ? 1 : 0),
      });
    });
  });
}

/**
 * The CLI's hook, answered here (DoorRunContext.hooksHere): what `flotilla runtime-hook <event>` answers, for this
 * agent, with the environment its commands get — the config read as the command reads it. Claude's SessionStart
 * (Runtime.firstTurnWaitsForMcp) is held until `flotilla mcp` has listed the fleet tools. A hook that fails says so
 * on stderr with exit 1, as the command would; it never throws into the door.
 */
async function answerHook(
  layout: Layout,
  rec: AgentRecord,
  event: string,
  req: DoorRun,
  env: NodeJS.ProcessEnv,
): Promise<DoorRunResult> {
  traceMark(`shim: ${event} hook asked`);
  try {
    const [{ runRuntimeHook, hookEventRefusal }, { loadConfigCached }] = await Promise.all([
      import('./cli-host/hook.js'),
      import('../config/cached.js'),
    ]);
    const refused = hookEventRefusal(event);
    if (refused) return { stdout: '', stderr: `flotilla: ${refused}\n`, exitCode: 2 };
    const { config } = await loadConfigCached(layout, {});
    const reply = await runRuntimeHook(layout, config, event as FleetHookEvent, req.stdin ?? '', { id: rec.id, env });
    return { stdout: reply?.stdout ?? '', stderr: '', exitCode: reply?.exitCode ?? 0 };
  } catch (err) {
    const code = err instanceof FlotillaError ? err.exitCode : 1;
    return { stdout: '', stderr: `flotilla: ${(err as Error).message}\n`, exitCode: code };
  } finally {
    traceMark(`shim: ${event} hook answered`);
  }
}

function refuseRoot(args: readonly string[]): void {
  if (args.some((a) => a === '--root' || a.startsWith('--root='))) {
    throw new FlotillaError(
      "--root is refused through the door: a command acts on its own agent's fleet — drop --root",
      { code: 'door-root', exitCode: 2 },
    );
  }
}

/** Where and with what environment a forwarded command runs: the caller's cwd only inside the agent's writable dirs. */
function hostPlace(
  layout: Layout,
  rec: AgentRecord,
  callerCwd: string | undefined,
  ctx: DoorRunContext,
): { cwd: string; env: NodeJS.ProcessEnv } {
  const cwd =
    callerCwd && ctx.writable.some((w) => callerCwd === w || callerCwd.startsWith(w.replace(/\/+$/, '') + '/'))
      ? callerCwd
      : rec.cwd;
  const env: NodeJS.ProcessEnv = { ...ctx.env, FLOTILLA_ROOT: layout.root };
  delete env.FLOTILLA_DOOR;
  delete env.FLOTILLA_DOOR_BUS;
  return { cwd, env };
}

const CHUNK_SAVE_MS = 2_000;

/**
 * `flotilla mcp` for the agent, served in this process, the agent's own, on the connection (inbox/door.ts `pipe`): its
 * writing tools (send_message, spawn_agent, …) act on the host as this agent, from inside the sandbox, where the fleet
 * root is read-only; with the environment the agent's commands get (a spawn's keys, definitions and board come from
 * it). In a process of its own it was one more Node per vendor agent (~60 MB), started while the CLI starts (§14).
 */
async function pipeForAgent(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  req: DoorPipe,
  ctx: DoorRunContext,
  sock: Socket,
  rest: Buffer,
): Promise<void> {
  const refuse = (message: string) => {
    if (!sock.destroyed) sock.end(JSON.stringify({ ok: false, message }) + '\n');
  };
  sock.on('error', () => undefined);
  const name = req.args[0];
  if (!name || !DOOR_PIPE_COMMANDS.has(name))
    return refuse(`the door joins only ${[...DOOR_PIPE_COMMANDS].join(', ')} to a connection`);
  try {
    refuseRoot(req.args);
  } catch (err) {
    return refuse((err as Error).message);
  }
  if (req.args.length > 1) return refuse(`flotilla mcp takes no arguments — got ${req.args.slice(1).join(' ')}`);
  traceMark(`shim: ${name} joined`);
  try {
    const [{ serveMcp }, { readRecord }, { VERSION }] = await Promise.all([
      import('../mcp/server.js'),
      import('../fleet/registry.js'),
      import('../versions.js'),
    ]);
    if (rest.length) sock.unshift(rest);
    const record = readRecord(layout, rec.id) ?? rec;
    const { close } = await serveMcp(
      layout,
      config,
      { kind: 'agent', record },
      {
        stdin: sock,
        stdout: sock,
        version: VERSION,
        env: hostPlace(layout, rec, rec.cwd, ctx).env,
        // zod's code cache (cli/chunk.ts) holds what a connection compiles: written once the first has listed
        // the tools, after the CLI's first request rather than beside it.
        listed: () => setTimeout(chunksUsed, CHUNK_SAVE_MS).unref(),
      },
    );
    traceMark('mcp: serving');
    // The client's end of input ends the server, which then ends the connection; a lost connection ends it too.
    sock.once('end', () => void close().finally(() => sock.end()));
    sock.once('close', () => void close());
    if (sock.destroyed) void close();
    sock.resume();
  } catch (err) {
    refuse(`flotilla mcp could not start: ${(err as Error).message}`);
  }
}
