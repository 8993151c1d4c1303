import { existsSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import { userPaths, type Layout } from '../layout/layout.js';
import type { Bus } from './types.js';

/** Same values as the defaults in src/config/fleet-schema.ts (a test keeps them equal). */
export const DEFAULT_FLEET_SETTINGS: Readonly<Config['fleet']> = {
  bus: 'maildir',
  name: null,
  host: null,
  lost_after_secs: 30,
  audit_max_age_secs: 2_592_000,
  nats: {
    token_env: 'FLOTILLA_NATS_TOKEN',
    user_env: 'FLOTILLA_NATS_USER',
    password_env: 'FLOTILLA_NATS_PASSWORD',
    ca_file: null,
  },
};

/**
 * The fleet's bus for a process that has not loaded the config (§18): `flotilla send` and
 * every completion pass here, so with no config file and no `FLOTILLA_FLEET_*` variable the
 * answer is `maildir` without loading the config loader (as inbox/settings.ts does).
 */
export async function fleetBus(layout: Layout, env: NodeJS.ProcessEnv = process.env): Promise<Bus> {
  const config = await fleetConfig(layout, env);
  const { busFor } = await import('./open.js');
  return busFor(layout, config);
}

/**
 * The `fleet` and `hosts` settings, read as fleetBus reads them: without the config loader when nothing overrides the
 * defaults.
 */
export async function fleetConfig(
  layout: Layout,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Pick<Config, 'fleet' | 'hosts'>> {
  const overridden =
    existsSync(layout.configFile) ||
    existsSync(userPaths(env).configFile) ||
    Object.keys(env).some((k) => k.startsWith('FLOTILLA_FLEET_'));
  if (!overridden) return { fleet: DEFAULT_FLEET_SETTINGS, hosts: {} };
  const { loadConfigCached } = await import('../config/cached.js');
  return (await loadConfigCached(layout, {}, env)).config;
}
