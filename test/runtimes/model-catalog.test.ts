import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { codex } from '../../src/runtimes/codex.js';
import { fleetCatalog } from '../../src/runtimes/model-catalog.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { pinnedRuntimeBinary } from './helpers.js';

/**
 * Codex's model catalogue is asked of the installed CLI once per fleet and binary
 * (docs/runtimes.md, "Codex's model catalogue"): the spawner asks beside opening the window and
 * the shim finds the answer, so two processes asking at once start the CLI once, and one that
 * died while asking does not stop the next.
 */
describe("Codex's model catalogue, asked once", () => {
  let fleet: TempFleet | undefined;
  afterEach(() => fleet?.cleanup());

  /** The pinned Codex behind a script that counts its starts. */
  function countingCodex(dir: string): { bin: string; starts: () => number } {
    const log = join(dir, 'starts');
    const bin = join(dir, 'codex-counting');
    writeFileSync(bin, `#!/bin/sh\necho start >> '${log}'\nexec '${pinnedRuntimeBinary('codex')}' "$@"\n`);
    chmodSync(bin, 0o755);
    return { bin, starts: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0) };
  }

  it('two asking at once start the CLI once and get the same catalogue', async () => {
    fleet = tempFleet();
    const { layout } = fleet;
    const cli = countingCodex(fleet.project);
    const [a, b] = await Promise.all([
      fleetCatalog(layout, codex, cli.bin, process.env, layout.runtimeDir('a')),
      fleetCatalog(layout, codex, cli.bin, process.env, layout.runtimeDir('b')),
    ]);
    expect(cli.starts()).toBe(1);
    expect(a.file).toBe(join(layout.indexDir, 'codex-models.json'));
    expect(b).toEqual(a);
    expect(Object.keys(a.upgrades).length).toBeGreaterThan(0);
    // Kept: a later spawn reads it without starting the CLI.
    await fleetCatalog(layout, codex, cli.bin, process.env, layout.runtimeDir('c'));
    expect(cli.starts()).toBe(1);
    expect(existsSync(join(layout.indexDir, 'codex-model-catalog.asking'))).toBe(false);
  });

  it('one that died while asking leaves the next to ask', async () => {
    fleet = tempFleet();
    const { layout } = fleet;
    const cli = countingCodex(fleet.project);
    mkdirSync(layout.indexDir, { recursive: true });
    // Pre-seeded: the mark a process killed while asking leaves behind (a pid no process has).
    writeFileSync(join(layout.indexDir, 'codex-model-catalog.asking'), '2147483646\n');
    const got = await fleetCatalog(layout, codex, cli.bin, process.env, layout.runtimeDir('a'));
    expect(cli.starts()).toBe(1);
    expect(got.file).toBe(join(layout.indexDir, 'codex-models.json'));
  });
});
