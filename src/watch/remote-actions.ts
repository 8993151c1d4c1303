import type { Config } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import type { Host } from '../hosts/ssh.js';
import type { Layout } from '../layout/layout.js';
import type { WatchRow } from './rows.js';

/**
 * The dashboard's keys on another host's agent (docs/design.md §17.6): Enter attaches through
 * `ssh -t` to that host, where `flotilla attach` selects the agent's window on its tmux server
 * and attaches to it; `m` sends over the bus; `c` runs `flotilla cancel` there. Each goes
 * through the host's `hosts:` entry and the one ssh command line of hosts/ssh.ts. Like the
 * local actions, each returns one line for the bottom of the screen and never throws.
 */

type Remote = WatchRow & { host: string };

/** The `hosts:` entry for the row's host, or the one line saying to add it. */
function entryFor(row: Remote, config: Config, doing: string): Host | string {
  const entry = config.hosts[row.host];
  if (entry) return { name: row.host, ...entry };
  // Short enough for an 80-column dashboard's message line.
  return `${row.host} is not under hosts: in your config — add it to ${doing}: hosts: {${row.host}: {ssh: user@machine}}`;
}

/**
 * Inside tmux, a new window of the person's own session runs `ssh -t HOST flotilla attach ID`
 * (the dashboard stays where it was; leaving the remote tmux — detach — closes the window).
 * When ssh or the attach there fails, the window stays until Enter, so its error can be read.
 */
export async function attachElsewhere(row: Remote, config: Config, env: NodeJS.ProcessEnv): Promise<string> {
  const host = entryFor(row, config, 'attach');
  if (typeof host === 'string') return host;
  if (!row.tmux)
    return `${row.id} on ${row.host} has no tmux window (it runs in the background) — read it with 'flotilla output ${row.id}'`;
  try {
    const [{ remoteFlotillaCommand, sshArgv }, { currentTmux, Tmux, shellCommand }] = await Promise.all([
      import('../hosts/ssh.js'),
      import('../tmux/index.js'),
    ]);
    const argv = [
      'ssh',
      ...sshArgv(host, remoteFlotillaCommand(host, ['attach', row.id], { tty: true }), { tty: true }),
    ];
    const here = await currentTmux(env);
    if (!here) return `${row.id} runs on ${row.host} — outside tmux, attach with: ${shellCommand(argv)}`;
    const closing = `ssh to ${row.host} ended with status $s — press Enter to close this window`;
    const script = `${shellCommand(argv)} || { s=$?; printf '\\n%s\\n' "${closing}"; read _; }`;
    await new Tmux({ socket: here.socketPath }).newWindow({
      target: here.sessionId,
      name: `${row.id}@${row.host}`,
      command: ['sh', '-c', script],
      detached: false,
    });
    return `opened ${row.id} on ${row.host} in a new window (ssh -t ${host.ssh})`;
  } catch (err) {
    return `cannot attach to ${row.id} on ${row.host}: ${errorMessage(err)}`;
  }
}

/** Mail from the person to another host's agent goes out on the bus, as `flotilla send` sends it (§18). */
export async function sendElsewhere(row: Remote, layout: Layout, config: Config, text: string): Promise<string> {
  try {
    const { busFor } = await import('../bus/open.js');
    const { message, queued } = await busFor(layout, config).mail.deliver({
      from: 'human',
      to: row.id,
      kind: 'message',
      body: text,
    });
    return queued
      ? `queued ${message.id} for ${row.id} on ${row.host}: the bus is unreachable, it goes when it is back`
      : `sent ${message.id} to ${row.id} on ${row.host}`;
  } catch (err) {
    return `cannot send to ${row.id} on ${row.host}: ${errorMessage(err)}`;
  }
}

/** `flotilla cancel ID` on the agent's host, as the person's `flotilla cancel` does it from here (§17.7). */
export async function cancelElsewhere(row: Remote, config: Config): Promise<string> {
  const host = entryFor(row, config, 'cancel');
  if (typeof host === 'string') return host;
  try {
    const { runRemoteFlotilla } = await import('../hosts/ssh.js');
    const r = await runRemoteFlotilla(host, ['cancel', row.id]);
    const said = (r.exitCode === 0 ? r.stdout : r.stderr).trim().split('\n').filter(Boolean).pop() ?? '';
    return r.exitCode === 0
      ? `${said || `cancelled ${row.id}`} on ${row.host}`
      : `cannot cancel ${row.id} on ${row.host}: ${said.replace(/^flotilla: /, '') || `exit ${r.exitCode}`}`;
  } catch (err) {
    return `cannot cancel ${row.id} on ${row.host}: ${errorMessage(err)}`;
  }
}
