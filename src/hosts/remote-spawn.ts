import { spawn } from 'node:child_process';
import type { Config } from '../config/schema.js';
import { FlotillaError, bracketLine } from '../errors.js';
import { callerLineage } from '../inbox/caller.js';
import type { Layout } from '../layout/layout.js';
import { hostNamed } from './hosts.js';
import { remoteFlotillaCommand, sshArgv, unreachable, type Host } from './ssh.js';

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
export function remoteSpawnArgs(o: RemoteSpawnOptions): string[] {
  const flag = (on: boolean | undefined, name: string) => (on ? [name] : []);
  const value = (v: string | undefined, name: string) => (v !== undefined ? [name, v] : []);
  return [
    'spawn',
    ...value(o.agent, '--agent'), ...value(o.id, '--id'), ...value(o.cwd, '--cwd'), ...value(o.model, '--model'),
    ...value(o.runtime, '--runtime'), ...value(o.board, '--board'),
    ...flag(o.worktree, '--worktree'), ...flag(o.oneshot, '--oneshot'), ...flag(o.wait, '--wait'), ...flag(o.session, '--session'),
    ...flag(o.background, '--background'), ...flag(o.queue, '--queue'), ...flag(o.autoClaim, '--auto-claim'), ...flag(o.json, '--json'),
  ];
}

/**
 * `spawn-agent --host NAME` (§17): the spawn runs on that host, in its fleet and its tmux
 * server, exactly as a person's spawn there would; its stdout (the id, or with --wait the
 * answer) is passed through as it comes. Its stderr is held until it ends, so a host ssh
 * cannot reach gives one line saying what to do rather than ssh's own words first.
 * Resolves to the exit status to end with (the remote spawn's).
 */
export function spawnOnHost(host: Host, opts: RemoteSpawnOptions, prompt: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('ssh', sshArgv(host, remoteFlotillaCommand(host, remoteSpawnArgs(opts))), { stdio: ['pipe', 'inherit', 'pipe'] });
    const err: Buffer[] = [];
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => reject(new FlotillaError(`cannot run ssh for host '${host.name}': ${e.message} — install the OpenSSH client (apt-get install openssh-client)`, { code: 'ssh-missing', cause: e })));
    child.on('close', (code) => {
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === 255) return reject(unreachable(host, stderr));
      if (code === 127) {
        return reject(new FlotillaError(`cannot spawn on host '${host.name}': '${host.flotilla}' or Node was not found there (${stderr.trim().split('\n').pop() ?? ''}) — run 'flotilla doctor --host ${host.name}'`, { code: 'host-missing-flotilla' }));
      }
      process.stderr.write(stderr);
      resolve(code ?? 1);
    });
    child.stdin.on('error', () => { /* the remote spawn may end before reading it all */ });
    child.stdin.end(prompt);
  });
}

/**
 * A person's `spawn-agent --host NAME`. An agent's is refused before anything is reached:
 * its child there would be a root of that host's fleet, outside its lineage, depth, caps and
 * budget, and ssh would carry the person's authority, not the agent's (docs/decisions.md
 * "Hosts before the bus"). Unknown host: a usage error naming the configured ones.
 */
export async function spawnRemote(layout: Layout, config: Config, name: string, opts: RemoteSpawnOptions, prompt: string): Promise<number> {
  const host = hostNamed(config, name);
  const caller = await callerLineage(layout);
  const agent = caller.parent?.id ?? caller.forged;
  if (agent) {
    throw new FlotillaError(
      `spawn refused: ${agent} is an agent, and an agent cannot open agents on another host yet — its child there would be outside its lineage, caps and budget; ask a person to run spawn-agent --host ${name}, or spawn here`,
      { code: 'host-refused', bracket: bracketLine('host-refused', { agent, host: name }) },
    );
  }
  return spawnOnHost(host, opts, prompt);
}
