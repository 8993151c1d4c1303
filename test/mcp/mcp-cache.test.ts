import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';
import { connectMcp, type McpSession } from './helpers.js';

/**
 * `flotilla mcp` runs from its own bundle, the MCP SDK inside it, through V8's code cache
 * (src/cli/fast.ts, compile-cache.ts): a vendor CLI waits for it before its first turn. A server
 * lives as long as its client and often ends by a signal, so it writes its cache once it has
 * answered its first tools/list (src/start-done.ts). Whatever state the cache is in, the client
 * is offered the same tools.
 */

let f: SpawnFleet | undefined;
let session: McpSession | undefined;
afterEach(async () => {
  await session?.close().catch(() => undefined);
  session = undefined;
  await f?.close();
  f = undefined;
});

/** The bundle's caches in `dir`, written whole (a write in progress is a `.tmp` beside them). */
function caches(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith('fast-mcp-') && n.endsWith('.cache')) : [];
}

/** The server's tools as a client lists them, and what it said on stderr. */
async function listed(fleet: SpawnFleet): Promise<unknown> {
  session = await connectMcp(fleet.layout.root, fleet.env, fleet.project);
  const { tools } = await session.client.listTools();
  return { tools, stderr: session.stderr() };
}

describe('flotilla mcp through the code cache', { timeout: 120_000 }, () => {
  it('writes its cache once it has listed its tools, still serving, and lists the same tools through it', async () => {
    f = spawnFleet();
    // Where a person's caches go by default: the fleet's pristine HOME, as nothing set XDG_CACHE_HOME.
    const cacheDir = join(f.env.HOME!, '.cache', 'flotilla', 'v8');

    const first = await listed(f);
    // Written while the server still runs: a client that ends it by a signal has not lost it.
    await eventually(() => caches(cacheDir).length === 1, 30_000, 'the cache written');
    const [name] = caches(cacheDir);
    const written = statSync(join(cacheDir, name!));
    await session!.close();

    const second = await listed(f);
    expect(second).toEqual(first);
    await session!.close();
    // V8 took it: not written again (a refused one would be, under a new inode).
    expect(caches(cacheDir)).toEqual([name]);
    const after = statSync(join(cacheDir, name!));
    expect([after.ino, after.mtimeMs]).toEqual([written.ino, written.mtimeMs]);
  });

  it('serves the same over a cache V8 refuses, and writes a good one in its place', async () => {
    f = spawnFleet();
    const cacheDir = join(f.env.HOME!, '.cache', 'flotilla', 'v8');
    const first = await listed(f);
    await eventually(() => caches(cacheDir).length === 1, 30_000, 'the cache written');
    await session!.close();
    const path = join(cacheDir, caches(cacheDir)[0]!);
    const garbage = Buffer.alloc(statSync(path).size, 7);
    writeFileSync(path, garbage);

    expect(await listed(f)).toEqual(first);
    await eventually(() => !readFileSync(path).equals(garbage), 30_000, 'the cache written again');
    await session!.close();
    const rewritten = statSync(path);
    // The new one is good: V8 takes it, and the next server does not write it again.
    expect(await listed(f)).toEqual(first);
    await session!.close();
    expect(caches(cacheDir)).toEqual([basename(path)]);
    expect([statSync(path).ino, statSync(path).mtimeMs]).toEqual([rewritten.ino, rewritten.mtimeMs]);
  });
});
