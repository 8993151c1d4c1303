import { execa } from 'execa';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeVendor, type FakeVendor } from '../runtimes/fake-vendor.js';
import { eventually } from '../helpers/tmux.js';
import { fixture, isAlive, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * docs/security-shell.md "Keys on request only": a spawned harness gets its provider key through a
 * 0600 file it reads once, never through tmux. After a spawn with the key in the person's
 * environment, neither tmux's global or session environment, nor the harness's
 * /proc/<pid>/environ, nor a shell a person opens in the fleet's session holds it — and the
 * agent still reached its model with it (a local stand-in for the Anthropic API that records
 * the key each request carried).
 */
let f: SpawnFleet | undefined;
let vendor: FakeVendor | undefined;
afterEach(async () => {
  await f?.close();
  await vendor?.close();
  f = undefined;
  vendor = undefined;
});

const KEY = 'sk-ant-harness-key-7f3a';
const identity = { toVendor: (c: string) => c, fromVendor: (v: string) => v };

async function keyedFleet(): Promise<{ fleet: SpawnFleet; env: Record<string, string> }> {
  vendor = await startFakeVendor('anthropic', fixture('worker.yaml'), identity);
  const fleet = spawnFleet();
  writeFileSync(
    join(fleet.layout.agentsDir, 'keyed.md'),
    '---\nname: keyed\ndescription: uses a real provider\nmodel: anthropic:claude-sonnet-4-5\n---\nYou work.\n',
  );
  return { fleet, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: `${vendor.url}/v1` } };
}

/** The environment of a live process, as `/proc` shows it to any process of the same user. */
const environ = (pid: number): string => readFileSync(`/proc/${pid}/environ`, 'utf8');

describe('provider keys reach a harness without tmux', () => {
  it("a fleet server started by the spawn: no key in tmux, in the harness environ or in a person's window; the model got it", async () => {
    const { fleet, env } = await keyedFleet();
    f = fleet;
    const r = await f.spawnAgent(['--wait', '--agent', 'keyed', '--id', 'kd', 'work'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('result-of-kd');
    expect(vendor!.auth.length).toBeGreaterThanOrEqual(2);
    expect(vendor!.auth.every((a) => a === KEY)).toBe(true);

    expect(await f.tmux.tmux('show-environment', '-g')).not.toContain(KEY);
    for (const s of (await f.tmux.tmux('list-sessions', '-F', '#{session_name}')).split('\n')) {
      expect(await f.tmux.tmux('show-environment', '-t', `=${s}`)).not.toContain(KEY);
    }
    const pid = f.record('kd').pid!;
    expect(isAlive(pid)).toBe(true);
    expect(environ(pid)).toContain('FLOTILLA_AGENT_ID=kd');
    expect(environ(pid)).not.toContain(KEY);
    const server = Number(await f.tmux.tmux('display-message', '-p', '#{pid}'));
    expect(environ(server)).not.toContain(KEY);
    expect(existsSync(join(f.layout.runtimeDir('kd'), 'harness-keys.json'))).toBe(false);

    // A shell a person opens in the fleet's session.
    const session = (
      await f.tmux.tmux('display-message', '-p', '-t', f.record('kd').tmux!.paneId, '#{session_name}')
    ).trim();
    const out = join(f.project, 'person-env.txt');
    await f.tmux.tmux(
      'new-window',
      '-t',
      `=${session}`,
      '-n',
      'person',
      `sh -c 'env > ${out}.tmp; mv ${out}.tmp ${out}; sleep 60'`,
    );
    const seen = await eventually(() => existsSync(out) && readFileSync(out, 'utf8'), 30_000, "the person's window");
    expect(seen).toContain('PATH=');
    expect(seen).not.toContain(KEY);
  }, 240_000);

  it("a person's tmux server that has the key: the harness still has none in its environ, and a background agent reaches its model too", async () => {
    const { fleet, env } = await keyedFleet();
    f = fleet;
    await execa('tmux', ['-L', f.tmux.socket, 'new-session', '-d', '-s', 'person', 'sh'], {
      env: { ...process.env, ...env },
    });
    expect(await f.tmux.tmux('show-environment', '-g')).toContain(KEY);
    const r = await f.spawnAgent(['--wait', '--agent', 'keyed', '--id', 'kp', 'work'], env);
    expect(r.stdout).toContain('result-of-kp');
    const pid = f.record('kp').pid!;
    expect(isAlive(pid)).toBe(true);
    expect(environ(pid)).not.toContain(KEY);

    const bg = await f.spawnAgent(['--wait', '--background', '--agent', 'keyed', '--id', 'kb', 'work'], env);
    expect(bg.stdout).toContain('result-of-kb');
    expect(vendor!.auth.every((a) => a === KEY)).toBe(true);
  }, 240_000);
});
