import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * `spawn` (spawn-agent) and `run` (the harness it starts) run from their own bundles, through
 * V8's code cache (src/cli/fast.ts, compile-cache.ts, src/start-done.ts). A spawn writes its
 * cache when it did its whole command; a harness once its agent has started, since it may live
 * for hours and end by a signal. Whatever state the caches are in, the user gets the same results.
 */

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

function setup(): { cacheDir: string; caches: (prefix: string) => string[] } {
  f = spawnFleet();
  // Where a person's caches go by default: the fleet's pristine HOME, as nothing set XDG_CACHE_HOME.
  const cacheDir = join(f.env.HOME!, '.cache', 'flotilla', 'v8');
  return {
    cacheDir,
    caches: (prefix) => (existsSync(cacheDir) ? readdirSync(cacheDir).filter((n) => n.startsWith(prefix)) : []),
  };
}

const spawnArgs = (id: string) => ['--background', '--wait', '--id', id, '--model', `script:${fixture('worker.yaml')}`];

describe('spawn and run through the code cache', () => {
  it('spawn with no cache writes one for itself and for the harness, and spawns the same through them', async () => {
    const { cacheDir, caches } = setup();
    const first = await f!.spawnAgent([...spawnArgs('one'), 'do it']);
    expect(first.stderr).toBe('');
    expect([first.exitCode, first.stdout]).toEqual([0, 'Answer: result-of-one']);
    // The harness's cache is its runtime's: an in-process harness and a vendor CLI's shim compile different code.
    const written = [...caches('fast-spawn-'), ...caches('fast-run.flotilla-')];
    expect(written).toHaveLength(2);
    const before = written.map((n) => statSync(join(cacheDir, n)));

    const second = await f!.spawnAgent([...spawnArgs('two'), 'do it']);
    expect(second.stderr).toBe('');
    expect([second.exitCode, second.stdout]).toEqual([0, 'Answer: result-of-two']);
    expect(f!.record('two').lastTask?.status).toBe('completed');
    // V8 took both caches: neither is written again (a refused one would be, under a new inode).
    expect([...caches('fast-spawn-'), ...caches('fast-run.flotilla-')]).toEqual(written);
    const after = written.map((n) => statSync(join(cacheDir, n)));
    expect(after.map((s) => [s.ino, s.mtimeMs])).toEqual(before.map((s) => [s.ino, s.mtimeMs]));
  });

  it("a vendor CLI's shim keeps a cache of its own beside the in-process harness's", { timeout: 300_000 }, async () => {
    const { cacheDir, caches } = setup();
    const first = await f!.spawnAgent([...spawnArgs('one'), 'do it']);
    expect([first.exitCode, first.stdout]).toEqual([0, 'Answer: result-of-one']);
    const inProcess = caches('fast-run.flotilla-');
    expect(inProcess).toHaveLength(1);
    const before = statSync(join(cacheDir, inProcess[0]!));
    // The key and base URL only let the spawn pass its login check; the CLI's requests go nowhere.
    const keys = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };
    expect((await f!.spawnAgent(['--runtime', 'claude', '--id', 'c1', 'summarize'], keys)).exitCode).toBe(0);
    // Its start done, the shim writes what it compiled: the in-process harness's cache would have served it poorly.
    await eventually(() => caches('fast-run.claude-').length === 1, 120_000, "the shim's own cache");
    await f!.flotilla(['cancel', 'c1']);
    const after = statSync(join(cacheDir, inProcess[0]!));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it('a spawn refused and a harness that could not start write no cache, and say why as before', async () => {
    const { caches } = setup();
    const refused = await f!.spawnAgent(['--wait']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('flotilla: spawn refused: no task given — pass it as arguments');
    expect(caches('fast-spawn-')).toEqual([]);

    const lost = await f!.flotilla(['run', '--spawned', 'nobody-here']);
    expect(lost.exitCode).toBe(1);
    expect(lost.stderr).toContain('nobody-here');
    expect(caches('fast-run')).toEqual([]);
  });

  it('help and a mistake go to the full CLI, as for every fast command', async () => {
    const { caches } = setup();
    const help = await f!.flotilla(['spawn', '--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('--runtime <name>');
    expect(help.stdout).not.toContain('--lineage');
    const wrong = await f!.flotilla(['run', '--context', 'everything', 'x']);
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toMatch(/^flotilla: option '--context <mode>' argument 'everything' is invalid/);
    expect([...caches('fast-spawn-'), ...caches('fast-run')]).toEqual([]);
  });
});
