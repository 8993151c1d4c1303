import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, endRecord } from '../../src/fleet/registry.js';
import { awaitRecordEnd } from '../../src/lifecycle/record-end.js';
import { recordInput } from '../helpers/records.js';
import { spawnFleet, type SpawnFleet } from './helpers.js';

/**
 * `spawn-agent --wait --oneshot` (docs/design.md §5.5): a one-shot sends its answer just
 * before its harness ends its record, and `--wait` returns once both have happened, so the
 * person's next `status` says how it ended — within a bound, never hanging on a stuck harness.
 */
let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe('spawn-agent --wait --oneshot', () => {
  it('returns once the record has ended: status right after shows it completed', async () => {
    f = spawnFleet({ definitions: { worker: 'worker.yaml' } });
    for (const id of ['once-1', 'once-2', 'once-3']) {
      const r = await f.spawnAgent(['--wait', '--oneshot', '--agent', 'worker', '--id', id, 'x']);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(`Answer: result-of-${id}`);
      expect(r.exitCode).toBe(0);
      // What any reader sees the moment --wait is back: the registry itself, then status.
      expect(f.record(id).status).toBe('completed');
      const rows = JSON.parse((await f.flotilla(['status', '--json'])).stdout) as { id: string; status: string }[];
      expect(rows.find((x) => x.id === id)?.status).toBe('completed');
    }
  });

  it('waits for the harness to end the record, gives up after the bound on one that does not, and reaps one that died', async () => {
    f = spawnFleet();
    const { config } = await loadConfig({ layout: f.layout, env: f.env, userFile: null });
    // A real process standing in for a harness that answered and then hangs: its pid and start
    // time are what a harness registers; its task is answered, its record still `working`.
    const stuck = execa('sleep', ['60']);
    const pid = stuck.pid!;
    const answered = {
      task: 1,
      status: 'completed' as const,
      exitReason: null,
      finishedAt: new Date().toISOString(),
      outputPath: null,
    };
    createRecord(
      f.layout,
      recordInput('stuck-aaaaa', {
        status: 'working',
        pid,
        pidStartTime: processStartTime(pid),
        cwd: f.project,
        lastTask: answered,
      }),
    );
    const waited = await awaitRecordEnd(f.layout, config, 'stuck-aaaaa', 500);
    expect(waited.ended).toBe(false);
    expect(waited.record?.status).toBe('working');

    // A harness that ends it (as every harness does, a moment after its answer): the wait returns the ended record.
    const ending = awaitRecordEnd(f.layout, config, 'stuck-aaaaa', 30_000);
    endRecord(f.layout, 'stuck-aaaaa', { status: 'completed', exitReason: null });
    expect(await ending).toMatchObject({ ended: true, record: { status: 'completed' } });
    createRecord(
      f.layout,
      recordInput('stuck-bbbbb', {
        status: 'working',
        pid,
        pidStartTime: processStartTime(pid),
        cwd: f.project,
        lastTask: answered,
      }),
    );

    // The harness dies without ending it: the wait ends it as the reaper does, with how it ended.
    stuck.kill('SIGKILL');
    await stuck.catch(() => undefined);
    const reaped = await awaitRecordEnd(f.layout, config, 'stuck-bbbbb', 30_000);
    expect(reaped.ended).toBe(true);
    expect(reaped.record).toMatchObject({ status: 'completed', exitReason: 'exited while idle' });
  });
});
