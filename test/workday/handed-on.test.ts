import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * A result a person's command handed on is read (docs/decisions.md "Handed on is read"):
 * `spawn-agent --wait`, `flotilla wait` and `flotilla collect` print an answer, and its
 * completion in the human inbox is claimed, not left to pile up as unread mail. A result
 * nobody was handed stays unread.
 */
let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const completion = (fl: SpawnFleet, id: string) => completionsFrom(fl, 'human', id);
const finished = (fl: SpawnFleet, id: string) =>
  fl.records().some((r) => r.id === id && r.lastTask?.task === 1 && r.status === 'idle');

describe('results handed on to a person are read', { timeout: 300_000 }, () => {
  it('spawn-agent --wait, flotilla wait and flotilla collect leave no unread completion for what they printed', async () => {
    f = spawnFleet({ definitions: { worker: 'worker.yaml' } });

    const waited = await f.spawnAgent(['--wait', '--agent', 'worker', '--id', 'by-spawn-wait', 'go']);
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(waited.stdout).toContain('Answer: result-of-by-spawn-wait');

    for (const id of ['by-wait', 'by-collect']) {
      const r = await f.spawnAgent(['--agent', 'worker', '--id', id, 'go']);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    await eventually(
      () => ['by-wait', 'by-collect'].every((id) => finished(f!, id)),
      120_000,
      'the three tasks to finish',
    );
    // Each completion has reached the person's inbox before anyone looks.
    await eventually(
      () => ['by-wait', 'by-collect'].every((id) => completion(f!, id).length === 1),
      60_000,
      'the completions',
    );
    expect(completion(f, 'by-collect')[0]!.file).toMatch(/^new\//);

    const w = await f.flotilla(['wait', 'by-wait']);
    expect(w.exitCode).toBe(0);
    expect(w.stdout).toContain('Answer: result-of-by-wait');

    const c = await f.flotilla(['collect', '--json']);
    expect(c.exitCode).toBe(0);
    expect((JSON.parse(c.stdout) as { id: string }[]).map((x) => x.id)).toContain('by-collect');

    // spawn --wait may return before the completion is delivered: it is read when it arrives.
    await eventually(() => completion(f!, 'by-spawn-wait').length === 1, 60_000, 'the --wait completion');
    for (const id of ['by-spawn-wait', 'by-wait', 'by-collect']) {
      expect(
        completion(f, id).map((m) => m.file!.slice(0, 4)),
        id,
      ).toEqual(['cur/']);
    }
  });

  it('a result nobody waited for or collected stays unread, and status says so', async () => {
    f = spawnFleet({ definitions: { worker: 'worker.yaml' } });
    expect((await f.spawnAgent(['--agent', 'worker', '--id', 'alone', 'go'])).exitCode).toBe(0);
    await eventually(() => finished(f!, 'alone') && completion(f!, 'alone').length === 1, 120_000, 'the completion');
    expect(completion(f, 'alone')[0]!.file).toMatch(/^new\//);
    const s = await f.flotilla(['status']);
    expect(s.stdout).toContain('1 unread message for you — flotilla inbox');
  });
});
