import { existsSync } from 'node:fs';
import { userPaths, type Layout } from '../layout/layout.js';
import { DEFAULT_MAX_BODY_BYTES } from './message.js';

/** The `inbox.*` config keys (§4). */
export interface InboxSettings {
  rescan_secs: number;
  poll: 'auto' | 'always';
  poll_interval_ms: number;
  max_body_bytes: number;
  broadcast_all: 'people' | 'agents';
}

/** Same values as the defaults in src/config/schema.ts (a test keeps them equal). */
export const DEFAULT_INBOX_SETTINGS: Readonly<InboxSettings> = {
  rescan_secs: 30,
  poll: 'auto',
  poll_interval_ms: 100,
  max_body_bytes: DEFAULT_MAX_BODY_BYTES,
  broadcast_all: 'people',
};

/**
 * The effective `inbox.*` settings. `flotilla send` runs on every agent message, so when no
 * config file exists and no `FLOTILLA_INBOX_*` variable is set, the answer is the defaults
 * without loading the config loader (zod schema + YAML parser, most of send's start-up).
 */
export async function inboxSettings(layout: Layout, env: NodeJS.ProcessEnv = process.env): Promise<InboxSettings> {
  const overridden =
    existsSync(layout.configFile) ||
    existsSync(userPaths(env).configFile) ||
    Object.keys(env).some((k) => k.startsWith('FLOTILLA_INBOX_'));
  if (!overridden) return { ...DEFAULT_INBOX_SETTINGS };
  const { loadConfigCached } = await import('../config/cached.js');
  return (await loadConfigCached(layout, {}, env)).config.inbox;
}
