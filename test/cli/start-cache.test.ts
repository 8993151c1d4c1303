import { execFileSync } from 'node:child_process';
import { isAscii } from 'node:buffer';
import { execa } from 'execa';
import {
  appendFileSync,
  cpSync,
  existsSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { testHome } from '../helpers/home.js';
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

  it("the shim host keeps a cache of its own beside the in-process harness's", { timeout: 300_000 }, async () => {
    const { cacheDir, caches } = setup();
    const first = await f!.spawnAgent([...spawnArgs('one'), 'do it']);
    expect([first.exitCode, first.stdout]).toEqual([0, 'Answer: result-of-one']);
    const inProcess = caches('fast-run.flotilla-');
    expect(inProcess).toHaveLength(1);
    const before = statSync(join(cacheDir, inProcess[0]!));
    // The key and base URL only let the spawn pass its login check; the CLI's requests go nowhere.
    const keys = { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };
    expect((await f!.spawnAgent(['--runtime', 'claude', '--id', 'c1', 'summarize'], keys)).exitCode).toBe(0);
    // Its first agent's start done, the shim host writes what it compiled: the in-process harness's cache would have
    // served it poorly.
    await eventually(() => caches('fast-run.host-').length === 1, 120_000, "the shim host's own cache");
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

  it("a command that loads a package's chunk and fails writes no cache of it; one that finishes does", async () => {
    const { caches } = setup();
    const good = readFileSync(f!.layout.configFile, 'utf8');
    // A config the validator refuses: its message is zod's, from dist/cli/zod.js (src/cli/chunk.ts).
    appendFileSync(f!.layout.configFile, 'limits:\n  max_depth: "deep"\n');
    const refused = await f!.spawnAgent(['--background', 'do it']);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain("'limits.max_depth' expected number, received string");
    expect(caches('zod-')).toEqual([]);
    // The fleet's MCP server lists its tools' schemas with zod, and ends with its input.
    writeFileSync(f!.layout.configFile, good);
    const rpc = (id: number, method: string, params: object) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
    const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } };
    const mcp = await execa(process.execPath, [CLI, '--root', f!.layout.root, 'mcp'], {
      env: f!.env,
      extendEnv: false,
      cwd: f!.project,
      input: `${rpc(1, 'initialize', init)}\n${rpc(2, 'tools/list', {})}\n`,
      reject: false,
    });
    expect(mcp.exitCode).toBe(0);
    expect(mcp.stdout).toContain('"send_message"');
    expect(caches('zod-')).toHaveLength(1);
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

describe("the build's code cache seeds", () => {
  const repo = resolve(import.meta.dirname, '..', '..');
  const dist = join(repo, 'dist', 'cli');

  it('are written for the router, every fast bundle and every chunk, and V8 under a plain node takes each', () => {
    const seeds = readdirSync(join(dist, 'v8'));
    // The chunks (src/cli/chunk.ts): zod's is read by every vendor CLI's shim, the NATS client's by every bus command.
    const bundles = [
      'start.js',
      'zod.js',
      'nats-client.js',
      ...readdirSync(dist).filter((f) => /^fast-.*\.js$/.test(f)),
    ];
    const suffix = `-${process.version}-${process.arch}.cache`;
    expect(
      bundles.map((b) => seeds.filter((s) => s.startsWith(b.replace(/\.js$/, '-')) && s.endsWith(suffix)).length),
    ).toEqual(bundles.map(() => 1));
    // Each is ASCII, so V8 holds its source as a one-byte string outside its heap (src/cli/compile-cache.ts), not as a
    // two-byte one twice its size in every process that loads it (tools/build-cli.mjs asciiOnly).
    expect(bundles.filter((b) => !isAscii(readFileSync(join(dist, b))))).toEqual([]);
    // As src/cli/compile-cache.ts reads a bundle (its CommonJS wrapper; Latin-1 when ASCII, else UTF-8): a seed of
    // other text is refused.
    const check = `
      const { Script } = require('node:vm'); const fs = require('node:fs'); const path = require('node:path');
      const dir = ${JSON.stringify(dist)};
      for (const seed of fs.readdirSync(path.join(dir, 'v8'))) {
        const bundle = seed.replace(/-[0-9a-f]{16}-v[0-9.]+-[a-z0-9]+[.]cache$/, '.js');
        const bytes = Buffer.concat([Buffer.from('(function (exports, require, module, __filename, __dirname) {'), fs.readFileSync(path.join(dir, bundle)), Buffer.from('\\n})')]);
        const text = bytes.toString(require('node:buffer').isAscii(bytes) ? 'latin1' : 'utf8');
        const script = new Script(text, { filename: path.join(dir, bundle), cachedData: fs.readFileSync(path.join(dir, 'v8', seed)) });
        console.log(bundle + ' ' + (script.cachedDataRejected ? 'refused' : 'taken'));
      }`;
    const verdicts = execFileSync(process.execPath, ['-e', check], { encoding: 'utf8' }).trim().split('\n');
    expect(verdicts.sort()).toEqual(bundles.map((b) => `${b} taken`).sort());
  });

  it('a corrupt seed costs a compile, nothing else: the command runs and the home gets its own cache', () => {
    // Pristine whatever FLOTILLA_TEST_HOME says: the home's cache being written is what is checked.
    const home = testHome('pristine');
    const pkg = join(dirname(home.dir), 'pkg');
    try {
      // A copy of the built CLI beside the repository's packages, whose seeds are then broken on purpose.
      cpSync(dist, join(pkg, 'dist', 'cli'), { recursive: true });
      symlinkSync(join(repo, 'node_modules'), join(pkg, 'node_modules'));
      writeFileSync(join(pkg, 'package.json'), '{"type":"module"}\n');
      for (const seed of readdirSync(join(pkg, 'dist', 'cli', 'v8')))
        writeFileSync(join(pkg, 'dist', 'cli', 'v8', seed), 'not a code cache');
      const out = execFileSync(process.execPath, [join(pkg, 'dist', 'cli', 'main.js'), 'status'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: home.dir, FLOTILLA_ROOT: join(pkg, 'root') },
      });
      expect(out).toContain('no fleet here');
      const written = readdirSync(join(home.dir, '.cache', 'flotilla', 'v8'));
      expect(written.filter((n) => n.startsWith('fast-status-'))).toHaveLength(1);
    } finally {
      home.cleanup();
    }
  });
});
