import { existsSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyFleetRetention } from '../../src/transcript/fleet-retention.js';
import { readMeta } from '../../src/transcript/meta.js';
import { fixture } from '../helpers/scripts.js';
import { eventually } from '../helpers/tmux.js';
import { bannerId, project, type Project } from '../hooks-e2e/project.js';

const TWO_STEP = fixture('resume/two-step.yaml');
const SLOW = fixture('resume/slow.yaml');

describe('output, collect, transcript --follow, retention', () => {
  let p: Project;
  beforeEach(() => {
    p = project('flotilla-outputs-');
    p.agent('worker', { permissions: { permission_mode: 'dont_ask' } });
  });
  afterEach(() => p.cleanup());

  async function finished(prompt: string): Promise<string> {
    const r = await p.run(['run', '--agent', 'worker', '--model', `script:${TWO_STEP}`, '--oneshot', prompt]);
    expect(r.exitCode, r.stderr).toBe(0);
    return bannerId(r.stderr);
  }

  /**
   * A slow agent, started and not awaited; resolves once its shell command runs. The command
   * waits for a `release` file in the project, so the agent is still working whatever the
   * machine's load, until `finish()` creates the file and waits for the end.
   */
  async function running(): Promise<{ id: string; finish(): Promise<unknown> }> {
    const before = new Set(p.ids());
    rmSync(join(p.project, 'release'), { force: true });
    const proc = p.start(['run', '--agent', 'worker', '--model', `script:${SLOW}`, '--oneshot', 'take your time']);
    const id = await eventually(
      () =>
        p
          .ids()
          .find(
            (i) => !before.has(i) && p.record(i).status === 'working' && p.record(i).lastLine.startsWith('$ for i'),
          ),
      30_000,
      'the slow agent to run its command',
    );
    return {
      id,
      finish() {
        writeFileSync(join(p.project, 'release'), '');
        return proc;
      },
    };
  }

  it('output prints a finished answer; unknown and unfinished agents are clear errors', async () => {
    const id = await finished('one');
    const out = await p.run(['output', id.slice(0, 9)]);
    expect(out.exitCode, out.stderr).toBe(0);
    expect(out.stdout).toBe('First answer: first-run-output');
    const json = await p.run(['output', '--json', id]);
    expect(JSON.parse(json.stdout)).toMatchObject({ id, output: 'First answer: first-run-output' });

    const none = await p.run(['output', 'zz']);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toBe("flotilla: no agent matches 'zz' — run 'flotilla status' to list agents");

    const slow = await running();
    const early = await p.run(['output', slow.id]);
    expect(early.exitCode).toBe(1);
    expect(early.stderr).toContain(
      `'${slow.id}' has not finished a task yet (working) — run 'flotilla wait ${slow.id}'`,
    );
    await slow.finish();
  });

  it('collect prints each finished result once, marks it collected, and skips running agents', async () => {
    const a = await finished('first');
    const b = await finished('second');
    const slow = await running();

    const first = await p.run(['collect']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout.match(/^━━ /gm)?.length).toBe(2);
    expect(first.stdout).toContain(`━━ ${a} · worker · completed`);
    expect(first.stdout).toContain(`━━ ${b} · worker · completed`);
    expect(first.stdout.match(/First answer: first-run-output/g)?.length).toBe(2);
    expect(first.stdout).not.toContain(slow.id);
    for (const id of [a, b]) {
      expect(p.record(id).collectedAt).not.toBeNull();
      expect(readMeta(p.layout, id).collected_at).toBe(p.record(id).collectedAt);
    }
    expect(p.record(slow.id).collectedAt).toBeNull();

    const second = await p.run(['collect']);
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toBe('');

    await slow.finish();
    const third = await p.run(['collect', '--json']);
    const results = JSON.parse(third.stdout) as { id: string; status: string; output: string }[];
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ id: slow.id, status: 'completed', output: 'Slow answer: slow-done' });
    expect(JSON.parse((await p.run(['collect', '--json'])).stdout)).toEqual([]);
  });

  it('transcript --follow prints entries as they are appended and stops when the agent ends', async () => {
    const slow = await running();
    const following = p.start(['transcript', '--follow', slow.id]);
    // --follow is attached and printing while the agent still works (a fixed pause could end
    // before a slow machine had started it); then the agent finishes.
    let early = '';
    following.stdout!.on('data', (d: Buffer) => {
      early += d.toString();
    });
    await eventually(() => early.includes('take your time'), 60_000, '--follow to print the running agent');
    await slow.finish();
    const follow = await following;
    expect(follow.exitCode, String(follow.stderr)).toBe(0);
    const out = String(follow.stdout);
    expect(out).toContain(`━━ ${slow.id} · worker`);
    expect(out).toContain('take your time');
    expect(out).toContain('$ for i in $(seq 1200); do [ -e release ] && break; sleep 0.1; done; echo slow-done');
    expect(out).toContain('Slow answer: slow-done');
    expect(out).toMatch(/━━ end: completed/);

    // After the end, --follow prints the whole file and returns at once; --json is one record per line.
    const json = await p.run(['transcript', '--json', '--follow', slow.id]);
    const lines = json.stdout.split('\n').map((l) => JSON.parse(l) as { type: string });
    expect(lines[0]!.type).toBe('header');
    expect(lines.at(-1)!.type).toBe('end');
  });

  // Seven agent runs one after another: minutes on a loaded machine.
  it(
    'transcripts.max_files: 3 keeps the 3 newest finished transcripts and the live agent, with no orphan sidecars',
    { timeout: 240_000 },
    async () => {
      p.config({ transcripts: { max_files: 3 } });
      const done: string[] = [];
      for (let i = 0; i < 6; i++) done.push(await finished(`task ${i}`));
      // Spawning the live agent applies retention (§8: on each spawn).
      const live = await running();
      const kept = (): string[] =>
        readdirSync(p.layout.transcriptsDir)
          .filter((n) => n.endsWith('.jsonl'))
          .map((n) => n.slice(0, -6))
          .sort();
      const metas = (): string[] =>
        readdirSync(p.layout.transcriptsDir)
          .filter((n) => n.endsWith('.meta.json'))
          .map((n) => n.slice(0, -10))
          .sort();
      const expected = [...done.slice(3), live.id].sort();
      expect(kept()).toEqual(expected);
      expect(metas()).toEqual(expected);

      // gc applies the same retention and still never touches the live agent.
      const gc = await p.run(['gc']);
      expect(gc.exitCode, gc.stderr).toBe(0);
      expect(kept()).toEqual(expected);
      expect(metas()).toEqual(expected);
      await live.finish();
      expect(readdirSync(p.layout.transcriptsDir).filter((n) => n.startsWith('.'))).toEqual([]);
    },
  );

  it('output.retention_secs deletes old outputs of finished agents only (the function gc calls)', async () => {
    const old = await finished('old one');
    const slow = await running();
    // Make both outputs look an hour old; the running agent's is written when it ends, so give it one now.
    writeFileSync(p.layout.output(slow.id), 'partial');
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(p.layout.output(old), hourAgo, hourAgo);
    utimesSync(p.layout.output(slow.id), hourAgo, hourAgo);
    const r = applyFleetRetention(p.layout, {
      transcripts: { enabled: true, max_files: 0 },
      output: { max_bytes: 1_048_576, retention_secs: 60 },
    });
    expect(r.outputs).toEqual([old]);
    expect(existsSync(p.layout.output(old))).toBe(false);
    expect(existsSync(p.layout.output(slow.id))).toBe(true);
    expect(existsSync(p.layout.transcript(old))).toBe(true);
    await slow.finish();
  });
});
