import { existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { explain } from './suite.js';
import { vendorFleet, type VendorFleet } from './helpers.js';
import { TARGETS } from './targets.js';

/**
 * The person's own login, by reference (docs/runtimes.md, "Logins"): with no key in the
 * environment, an agent's CLI authenticates with the login file in the person's HOME — the
 * fake server sees that login's bearer token — and nothing is copied into the fleet root.
 */
let fleet: VendorFleet | undefined;
afterEach(async (ctx) => {
  if (fleet && ctx.task.result?.state === 'fail') await explain(fleet);
  await fleet?.dispose();
  fleet = undefined;
});

/** Every file under `dir` (links not followed), relative. */
function filesUnder(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]));
}

describe('runtimes.<name>.login: shared (the default)', { timeout: 600_000 }, () => {
  it("Claude Code uses the person's ~/.claude/.credentials.json in place: the server sees its token, no copy in the fleet root", async () => {
    const t = TARGETS.claude();
    const f = await vendorFleet({ ...t, env: (url) => ({ ANTHROPIC_BASE_URL: url }), script: 'first.yaml', definitions: { a: 'permissions:\n  permission_mode: dont_ask\n' } });
    fleet = f;
    mkdirSync(join(f.home, '.claude'));
    const token = 'sk-ant-oat01-the-persons-own-login-token';
    writeFileSync(join(f.home, '.claude', '.credentials.json'), JSON.stringify({
      claudeAiOauth: { accessToken: token, refreshToken: 'sk-ant-ort01-refresh', expiresAt: Date.now() + 86_400_000, scopes: ['user:inference', 'user:profile'], subscriptionType: 'max' },
    }), { mode: 0o600 });
    const id = await f.spawnChild('a', 'claude-shared', 'first-task-marker-31');
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, 'the completion');
    expect(f.vendor.auth.length).toBeGreaterThan(0);
    expect(new Set(f.vendor.auth)).toEqual(new Set([`Bearer ${token}`]));
    expect(filesUnder(f.layout.root).filter((p) => p.endsWith('.credentials.json'))).toEqual([]);
  });

  it("Codex uses the person's ~/.codex/auth.json through a link: the server sees its key, the fleet root holds only the link", async () => {
    const t = TARGETS.codex();
    const f = await vendorFleet({ ...t, env: (url) => ({ OPENAI_BASE_URL: `${url}/v1` }), script: 'first.yaml', definitions: { a: 'permissions:\n  permission_mode: dont_ask\n' } });
    fleet = f;
    mkdirSync(join(f.home, '.codex'));
    const key = 'sk-the-persons-own-codex-login-key';
    const authFile = join(f.home, '.codex', 'auth.json');
    writeFileSync(authFile, JSON.stringify({ OPENAI_API_KEY: key }), { mode: 0o600 });
    const id = await f.spawnChild('a', 'codex-shared', 'first-task-marker-31', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, 'the completion');
    expect(new Set(f.vendor.auth)).toEqual(new Set([`Bearer ${key}`]));
    const link = join(f.layout.runtimeDir(id), 'auth.json');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(authFile);
  });
});
