import { execa } from 'execa';
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, readRecord } from '../../src/fleet/registry.js';
import { list } from '../../src/inbox/read.js';
import { cancelAgent } from '../../src/lifecycle/cancel.js';
import { sendCompletionOnce } from '../../src/lifecycle/completion.js';
import { sleep } from '../../src/sleep.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

let f: TempFleet;
beforeEach(() => {
  f = tempFleet('flotilla-cancel-once-');
});
afterEach(() => f.cleanup());

const completionsTo = async (to: string, from: string) =>
  (await list(f.layout, to, { includeRead: true }))
    .map((i) => i.message)
    .filter((m) => m.kind === 'completion' && m.from === from);

describe('flotilla cancel and a completion another process is delivering (§5.7, §5.8)', () => {
  it("returns once that delivery is done: the person's inbox read right after holds the one completion", async () => {
    // The agent's harness, played by a `sleep` that SIGTERM ends.
    const harness = execa('sleep', ['60'], { reject: false });
    const rec = createRecord(
      f.layout,
      recordInput('ag-c', { status: 'working', pid: harness.pid!, pidStartTime: processStartTime(harness.pid!) }),
    );
    // Another live process (the pane's reaper) holds the delivery's turn of that task's completion.
    const reaper = execa('sleep', ['60'], { reject: false });
    const turn = `${f.layout.marker(`ag-c.task-${rec.task}.completion`)}.run-0`;
    mkdirSync(dirname(turn), { recursive: true });
    writeFileSync(turn, JSON.stringify({ pid: reaper.pid, start: processStartTime(reaper.pid!) }) + '\n');

    let returned = false;
    const seenAtReturn = cancelAgent(f.layout, defaultConfig(), rec, { graceMs: 2_000 }).then(async (r) => {
      returned = true;
      return { cancelled: r.cancelled, completions: await completionsTo('human', 'ag-c') };
    });
    await sleep(1_500);
    expect(returned).toBe(false);
    // The reaper delivers and gives its turn back.
    const ended = readRecord(f.layout, 'ag-c')!;
    reaper.kill('SIGKILL');
    await reaper;
    unlinkSync(turn);
    await sendCompletionOnce(f.layout, ended, ended.lastTask!);

    const seen = await seenAtReturn;
    expect(seen.cancelled).toEqual(['ag-c']);
    expect(seen.completions.map((m) => m.kind === 'completion' && m.status)).toEqual([ended.status]);
    await harness;
  });
});
