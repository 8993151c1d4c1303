import { writeFileSync } from 'node:fs';
import { hostYaml, startSshd, type Sshd } from '../helpers/sshd.js';
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
}

export async function twoHosts(opts: TwoHostsOptions = {}): Promise<TwoHosts> {
  const sshd = opts.sshd ?? await startSshd();
  const remote = spawnFleet({ definitions: opts.remoteDefinitions });
  const local = spawnFleet({ definitions: opts.localDefinitions });
  const entry = hostYaml('r1', opts.port ? { ...sshd, port: opts.port } : sshd, {
    root: remote.layout.root, cwd: remote.project, flotilla: opts.flotilla, env: { ...remote.env, ...opts.env },
  });
  writeFileSync(local.layout.configFile, `agents:\n  default_permission_mode: dont_ask\nmodels:\n  max_retries: 0\nhosts:\n${entry}`);
  return {
    local, remote, sshd,
    async close() {
      await local.close();
      await remote.close();
      if (!opts.sshd) await sshd.kill();
    },
  };
}
