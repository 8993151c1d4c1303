import type { Config } from '../config/schema.js';
import { VERSION } from '../versions.js';
import { hostNamed } from './hosts.js';
import { runRemoteFlotilla, type Host } from './ssh.js';

/** One line of `doctor --host`: the same shape as the local checks (cli/commands/doctor-checks.ts). */
export interface HostCheck {
  name: string;
  ok: boolean;
  warn?: boolean;
  detail: string;
  fix: string;
}

/** ssh's status when the remote shell found no such command (sh(1): 127). */
const NOT_FOUND = 127;

/**
 * `flotilla doctor --host NAME` (§17): reach the host with BatchMode ssh, run the configured
 * `flotilla doctor --json` there, and report its checks (Flotilla, Node, tmux, the fleet root
 * there…) under the host's name, with Flotilla's version there against the one here. Every
 * way it can fail is a check that says what to do, never a stack trace.
 */
export async function hostChecks(config: Config, name: string): Promise<HostCheck[]> {
  const host = hostNamed(config, name);
  const reach: HostCheck = {
    name: `${name}: ssh`,
    ok: true,
    detail: `${host.ssh}${host.port ? ` port ${host.port}` : ''}`,
    fix: '',
  };
  let r;
  try {
    r = await runRemoteFlotilla(host, ['doctor', '--json']);
  } catch (err) {
    return [
      {
        ...reach,
        ok: false,
        detail: (err as Error).message.replace(/ — .*$/, ''),
        fix: `make 'ssh -o BatchMode=yes ${host.ssh} true' work without a prompt (a key in ssh_options or your ssh agent, the host key known), then run this again`,
      },
    ];
  }
  if (r.exitCode === NOT_FOUND) return [reach, missing(host, r.stderr)];
  let remote: HostCheck[];
  try {
    remote = JSON.parse(r.stdout) as HostCheck[];
    if (!Array.isArray(remote)) throw new Error('not a list');
  } catch {
    const said = (r.stderr.trim() || r.stdout.trim()).split('\n').pop() ?? '';
    return [
      reach,
      {
        name: `${name}: flotilla`,
        ok: false,
        detail: `'${host.flotilla} doctor --json' there failed (exit ${r.exitCode})${said ? `: ${said}` : ''}`,
        fix: `run it on ${host.ssh} to see why, or point hosts.${name}.flotilla at a working Flotilla`,
      },
    ];
  }
  return [
    reach,
    ...remote.map((c) => (c.name === 'flotilla' ? versionCheck(host, c) : { ...c, name: `${name}: ${c.name}` })),
  ];
}

/** Flotilla there against Flotilla here: a different version may not speak the same files. */
function versionCheck(host: Host, c: HostCheck): HostCheck {
  const same = c.detail === VERSION;
  return {
    name: `${host.name}: flotilla`,
    ok: true,
    warn: !same,
    detail: `${c.detail} at ${host.flotilla}${same ? '' : ` (here ${VERSION})`}`,
    fix: same ? '' : `install Flotilla ${VERSION} on ${host.ssh} so both sides read the same records and messages`,
  };
}

/** What the remote shell could not find: Node (the flotilla script runs `node`) or Flotilla itself. */
function missing(host: Host, stderr: string): HostCheck {
  const said = stderr.trim().split('\n').pop() ?? '';
  if (/\bnode\b['"]?:? (\S+: )?(not found|No such file)/i.test(said)) {
    return {
      name: `${host.name}: node`,
      ok: false,
      detail: `Node.js not found on ${host.ssh}: ${said}`,
      fix: `install Node.js 20.19 or newer there, or add its folder to PATH in hosts.${host.name}.env`,
    };
  }
  return {
    name: `${host.name}: flotilla`,
    ok: false,
    detail: `'${host.flotilla}' not found on ${host.ssh}${said ? `: ${said}` : ''}`,
    fix: `install Flotilla there (npm install -g flotilla) or set hosts.${host.name}.flotilla to its path`,
  };
}
