import { writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { hostYaml, startSshd, type Sshd } from '../helpers/sshd.js';
import { trustProject } from '../helpers/trust.js';
import { spawnFleet, type FleetOptions, type SpawnFleet } from '../spawn/helpers.js';

/**
 * Two "hosts" for one test: this machine's fleet (`local`) and a second fleet (`remote`, its
 * own project, HOME, config directory, fleet root and tmux server) reached only through a real
 * sshd as host `r1` in the local config (docs/design.md §17). `close()` stops both and sshd.
 */
export interface TwoHosts {
  local: SpawnFleet;
  remote: SpawnFleet;
  sshd: Sshd;
  close(): Promise<void>;
}

export interface TwoHostsOptions {
  /** Definitions of the remote fleet (name → script in test/fixtures/spawn). */
  remoteDefinitions?: FleetOptions['definitions'];
  localDefinitions?: FleetOptions['definitions'];
  flotilla?: string;
  env?: Record<string, string>;
  /** Reach a port nothing listens on instead. */
  port?: number;
  /** Reuse a running sshd. */
  sshd?: Sshd;
  /**
   * Both hosts on this nats-server as one fleet (`fleet.bus`, the same `fleet.name`, design §18), called `here` and
   * `r1`.
   */
  bus?: NatsServer;
}

/** A `fleet:` block putting a host on a shared bus under one fleet name, calling itself `host`. */
export function fleetBusYaml(bus: NatsServer, name: string, host: string): string {
  return `fleet:\n  bus: ${JSON.stringify(bus.url)}\n  name: ${name}\n  host: ${host}\n`;
}

let fleets = 0;

export async function twoHosts(opts: TwoHostsOptions = {}): Promise<TwoHosts> {
  const sshd = opts.sshd ?? (await startSshd());
  // One fleet name per pair: two pairs on one server never read each other's mail.
  const name = `t${process.pid}x${++fleets}`;
  const shared = opts.bus ? fleetBusYaml(opts.bus, name, 'here') : '';
  const remote = spawnFleet({
    definitions: opts.remoteDefinitions,
    config: opts.bus ? fleetBusYaml(opts.bus, name, 'r1') : '',
  });
  const local = spawnFleet({ definitions: opts.localDefinitions });
  const entry = hostYaml('r1', opts.port ? { ...sshd, port: opts.port } : sshd, {
    root: remote.layout.root,
    cwd: remote.project,
    flotilla: opts.flotilla,
    env: { ...remote.env, ...opts.env },
  });
  writeFileSync(
    local.layout.configFile,
    `agents:\n  default_permission_mode: dont_ask\nmodels:\n  max_retries: 0\n${shared}hosts:\n${entry}`,
  );
  // The config changed since spawnFleet trusted the project: trusted again, as a person would.
  trustProject(local.project, local.env);
  return {
    local,
    remote,
    sshd,
    async close() {
      await local.close();
      await remote.close();
      if (!opts.sshd) await sshd.kill();
    },
  };
}

/**
 * A test file's two hosts on one real nats-server: the server is the file's, each test's pair
 * is closed after it. `open` makes this test's pair on the file's bus.
 */
export function hostsOnBus(): { bus(): NatsServer; open(opts?: Omit<TwoHostsOptions, 'bus'>): Promise<TwoHosts> } {
  let bus: NatsServer | undefined;
  let pair: TwoHosts | undefined;
  beforeAll(async () => {
    bus = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await bus?.kill();
  });
  afterEach(async () => {
    await pair?.close();
    pair = undefined;
  });
  return {
    bus: () => bus!,
    async open(opts = {}) {
      pair = await twoHosts({ ...opts, bus: bus! });
      return pair;
    },
  };
}
