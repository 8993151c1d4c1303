import { hostname } from 'node:os';
import type { Config } from '../config/schema.js';

/** A host's name on the bus: what `status` groups by and `hosts:` entries are called (§17). */
export const SELF_HOST_NAME = /^[a-z0-9_-]{1,64}$/;

/**
 * This machine's name in the fleet (docs/design.md §17): `$FLOTILLA_HOST` (set by the ssh
 * command line of src/hosts/ssh.ts, so a host reached as `gpu1` calls itself `gpu1`), else
 * `fleet.host` in the person's config, else the machine's hostname, lowercased with every
 * other character turned into `-`. Every record this host writes carries it.
 */
export function selfHost(fleet: Pick<Config['fleet'], 'host'>, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.FLOTILLA_HOST?.trim();
  if (fromEnv && SELF_HOST_NAME.test(fromEnv)) return fromEnv;
  if (fleet.host) return fleet.host;
  return machineName(hostname());
}

/** A hostname as a host name: lowercase, anything outside [a-z0-9_-] becomes '-'. */
export function machineName(name: string): string {
  const clean = name
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '-')
    .slice(0, 64);
  return clean || 'localhost';
}
