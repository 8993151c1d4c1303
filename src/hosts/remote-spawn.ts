import type { Config } from '../config/schema.js';
import { FlotillaError, bracketLine } from '../errors.js';
import { depthRefusal } from '../fleet/caps.js';
import { forgedParentRefusal } from '../fleet/lineage.js';
import type { AgentRecord } from '../fleet/record.js';
import { callerLineage } from '../inbox/caller.js';
import type { Layout } from '../layout/layout.js';
import { hostNamed } from './hosts.js';
import { encodeLineage } from './lineage.js';
import { selfHost } from './self.js';
import { passThrough } from './pass-through.js';
import type { Host } from './ssh.js';

/** The spawn options that mean the same on the other host, as `flotilla spawn` flags there. */
export interface RemoteSpawnOptions {
  agent?: string;
  id?: string;
  cwd?: string;
  worktree?: boolean;
  oneshot?: boolean;
  wait?: boolean;
  session?: boolean;
  background?: boolean;
  queue?: boolean;
  model?: string;
  runtime?: string;
  board?: string;
  autoClaim?: boolean;
  json?: boolean;
}

/** `flotilla spawn` arguments for the host; the prompt travels on stdin, never in a command line. */
export function remoteSpawnArgs(o: RemoteSpawnOptions, lineage?: string): string[] {
  const flag = (on: boolean | undefined, name: string) => (on ? [name] : []);
  const value = (v: string | undefined, name: string) => (v !== undefined ? [name, v] : []);
  return [
    'spawn',
    ...value(o.agent, '--agent'),
    ...value(o.id, '--id'),
    ...value(o.cwd, '--cwd'),
    ...value(o.model, '--model'),
    ...value(o.runtime, '--runtime'),
    ...value(o.board, '--board'),
    ...flag(o.worktree, '--worktree'),
    ...flag(o.oneshot, '--oneshot'),
    ...flag(o.wait, '--wait'),
    ...flag(o.session, '--session'),
    ...flag(o.background, '--background'),
    ...flag(o.queue, '--queue'),
    ...flag(o.autoClaim, '--auto-claim'),
    ...flag(o.json, '--json'),
    ...value(lineage, '--lineage'),
  ];
}

/**
 * The spawn on that host, in its fleet and its tmux server, exactly as a spawn there would
 * run; its stdout (the id, or with --wait the answer) is passed through as it comes.
 * Resolves to the exit status to end with (the remote spawn's).
 */
export function spawnOnHost(host: Host, opts: RemoteSpawnOptions, prompt: string, lineage?: string): Promise<number> {
  return passThrough(host, remoteSpawnArgs(opts, lineage), prompt);
}

/**
 * `spawn-agent --host NAME` (§17.4-5). A person's opens a root of that host's fleet. An
 * agent's opens its own child there: the lineage (its record, as this host's registry and its
 * process ancestry prove it, and the tree's limits) goes along as `--lineage`, which the other
 * host accepts only from a caller that is no agent of its own (hosts/remote-child.ts); the
 * child's completion and mail come back over the bus, so `fleet.bus: maildir` refuses it
 * before anything is reached. A sandboxed agent's spawn reaches here through its door: its
 * harness runs it, and ssh, never the agent's own shell (docs/security.md "The door").
 * Unknown host: a usage error naming the configured ones.
 */
export async function spawnRemote(
  layout: Layout,
  config: Config,
  name: string,
  opts: RemoteSpawnOptions,
  prompt: string,
): Promise<number> {
  const host = hostNamed(config, name);
  const caller = await callerLineage(layout);
  if (caller.forged) throw forgedParentRefusal(caller.forged);
  const parent = caller.parent;
  if (!parent) return spawnOnHost(host, opts, prompt);
  return spawnOnHost(host, opts, prompt, childLineage(config, name, parent));
}

/**
 * The `--lineage` of `parent`'s child on host `name` (§17.5), once this side may send it: a
 * fleet on `maildir` could never carry the child's completion back, and the depth is known
 * here, so both are refused before anything is reached (the other host checks again). The
 * record is one this host proved — the caller's process ancestry, or the harness's own agent
 * for its model's spawn_agent — never anything the agent typed.
 */
export function childLineage(config: Config, name: string, parent: AgentRecord): string {
  if (config.fleet.bus === 'maildir') {
    throw new FlotillaError(
      `spawn refused: ${parent.id} is an agent, and its child on host '${name}' could reach it only over the fleet's bus, which is maildir here — set fleet.bus: nats://… and the same fleet.name on both hosts (docs/scale-out.md), or spawn here`,
      { code: 'host-refused', bracket: bracketLine('host-refused', { agent: parent.id, host: name }) },
    );
  }
  const deep = depthRefusal(parent, config.limits.max_depth);
  if (deep) throw deep;
  return encodeLineage(selfHost(config.fleet), parent, config.limits);
}
