import type { Config } from '../config/schema.js';
import { UsageError } from '../errors.js';
import type { Host } from './ssh.js';

/** The configured host called `name`, or a usage error naming the ones there are (§17). */
export function hostNamed(config: Config, name: string): Host {
  const entry = config.hosts[name];
  if (entry) return { name, ...entry };
  const known = Object.keys(config.hosts);
  throw new UsageError(
    `no host '${name}' in the config — ${known.length ? `known hosts: ${known.join(', ')}` : 'no hosts are configured'}; add it under hosts: in config.yaml (hosts: {${name}: {ssh: user@machine}})`,
    { code: 'unknown-host' },
  );
}

/** Every configured host, in the config's order. */
export function allHosts(config: Config): Host[] {
  return Object.entries(config.hosts).map(([name, entry]) => ({ name, ...entry }));
}
