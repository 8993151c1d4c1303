import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord } from '../../src/fleet/registry.js';
import { releaseLeases, takeLeases } from '../../src/leases/leases.js';
import { listLeases } from '../../src/leases/list.js';
import { recordInput } from '../helpers/records.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * docs/security-fleet.md "File leases are advisory": an agent cannot release a lease as another —
 * only the holder or a person may — and the refusal names the holder. (Who the caller is comes
 * from the door and ancestry; test/leases/cli.test.ts runs that through real processes.)
 */
let f: SpawnFleet | undefined;
const harnesses: ChildProcess[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) h.kill('SIGKILL');
  await f?.close();
  f = undefined;
});

describe('releasing a lease', () => {
  it('another agent is refused, naming the holder; the holder and a person may release it', async () => {
    f = spawnFleet();
    execFileSync('git', ['init', '-q'], { cwd: f.project });
    const file = join(f.project, 'shared.txt');
    writeFileSync(file, 'x\n');
    // Both agents live (a sleeping process stands in for each harness), so no lease lapses on its own.
    for (const id of ['a-0', 'b-0']) {
      const h = spawn('sleep', ['600'], { stdio: 'ignore' });
      harnesses.push(h);
      createRecord(
        f.layout,
        recordInput(id, { status: 'working', pid: h.pid!, pidStartTime: processStartTime(h.pid!), cwd: f.project }),
      );
    }
    const held = () => listLeases(f!.layout).flatMap((c) => c.leases.map((l) => l.holder));
    await takeLeases(f.layout, { targets: [file], holder: 'a-0', why: 'editing', ttlMs: null, task: null });
    await expect(releaseLeases(f.layout, 'b-0', [file], 'not mine')).rejects.toThrow(
      "refused: the lease on shared.txt is a-0's — only its holder or a person may release it",
    );
    expect(held()).toEqual(['a-0']);
    await releaseLeases(f.layout, 'a-0', [file], 'done');
    expect(held()).toEqual([]);
    await takeLeases(f.layout, { targets: [file], holder: 'a-0', why: 'editing', ttlMs: null, task: null });
    await releaseLeases(f.layout, 'human', [file], 'a person ends it');
    expect(held()).toEqual([]);
  });
});
