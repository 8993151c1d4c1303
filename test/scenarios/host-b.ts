import { execa } from 'execa';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { listRecords } from '../../src/fleet/registry.js';
import { isProcessAlive } from '../../src/fleet/proc.js';
import { resolveLayout, type Layout } from '../../src/layout/layout.js';
import { testHome, type TestHome } from '../helpers/home.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { hostYaml, startSshd, type Sshd } from '../helpers/sshd.js';
import { tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import type { World } from './world.js';

/**
 * The second half of the day's world (test/scenarios/day.test.ts, step 9): a second machine,
 * host `b`, reached only through a real sshd as root@127.0.0.1 with its own home, clone of the
 * shop, fleet root and tmux server, and one real nats-server both hosts share as the fleet's
 * bus. Host b's vendor CLIs talk to the same fake providers as host a's.
 */
export interface HostB {
  bus: NatsServer;
  sshd: Sshd;
  home: TestHome;
  /** Host b's clone of the shop (made by the person, over ssh). */
  project: string;
  /** Host b's environment: what its `hosts:` entry gives Flotilla there. */
  env: Record<string, string>;
  tmux: TmuxServer;
  /** The fleet both hosts are, on the bus. */
  fleet: string;
  layout(): Layout;
  /** The person's config on host a: the bus, and host b under `hosts:`. */
  configOfA(): string;
  /** Host b's own config: the same bus and fleet name, calling itself b. */
  configOfB(): string;
  /** Runs a shell command on host b over ssh, in b's home with b's environment (never throws). */
  ssh(command: string): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  dispose(): Promise<void>;
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export async function openHostB(a: World): Promise<HostB> {
  const bus = await natsServer();
  const home = testHome('pristine');
  const sshd = await startSshd({ home: home.dir });
  const tmux = tmuxServer();
  const project = join(home.dir, 'shop');
  const env: Record<string, string> = { ...a.env, HOME: home.dir, FLOTILLA_TMUX_SOCKET: tmux.socket };
  // The person's deploy key lives in their shell on a; b never had it.
  delete env.DEPLOY_TOKEN;
  const fleet = `shop${process.pid}`;
  const fleetYaml = (host: string): string => `fleet:\n  bus: ${bus.url}\n  name: ${fleet}\n  host: ${host}\n`;
  return {
    bus,
    sshd,
    home,
    project,
    env,
    tmux,
    fleet,
    layout: () => resolveLayout({ cwd: project, env: {} }),
    configOfA: () => `${fleetYaml('a')}hosts:\n${hostYaml('b', sshd, { cwd: project, env })}`,
    configOfB: () => fleetYaml('b'),
    async ssh(command) {
      const vars = Object.entries(env)
        .map(([k, v]) => `${k}=${quote(v)}`)
        .join(' ');
      const r = await execa(
        'ssh',
        [
          ...sshd.clientOptions,
          '-p',
          String(sshd.port),
          'root@127.0.0.1',
          `cd ${quote(home.dir)} && env -i ${vars} sh -c ${quote(command)}`,
        ],
        { reject: false, stdin: 'ignore' },
      );
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
    },
    async dispose() {
      const pids = (() => {
        try {
          return listRecords(resolveLayout({ cwd: project, env: {} })).flatMap((r) =>
            r.pid ? [[r.pid, r.pidStartTime] as const] : [],
          );
        } catch {
          return [];
        }
      })();
      await tmux.kill();
      for (const [pid, start] of pids)
        if (isProcessAlive(pid, start))
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            /* gone */
          }
      await sshd.kill();
      await bus.kill();
      home.cleanup();
    },
  };
}

/** A person's config file under `home` (`~/.config/flotilla/config.yaml`), its folder made. */
export function personConfigFile(home: string): string {
  const dir = join(home, '.config', 'flotilla');
  mkdirSync(dir, { recursive: true });
  return join(dir, 'config.yaml');
}

/** A config as the tour shows it: the test's ssh options and host environment (long, and the test's own) elided. */
export function shownConfig(text: string): string {
  return text
    .replace(/^( {4}ssh_options: ).*$/m, '$1[…]')
    .replace(/^( {4}env: ).*$/m, '$1{…}')
    .replace(/^( {4}flotilla: ).*\n/m, '');
}
