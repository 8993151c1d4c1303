import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { addTask } from '../../src/tasks/board.js';
import { readTask } from '../../src/tasks/store.js';
import { eventually } from '../helpers/tmux.js';
import { scriptCalls, userTexts } from '../helpers/scripts.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * A crowd draining one board (docs/design.md §15): 20 teammates — real harnesses in a real
 * tmux server, all of one `auto_claim` definition — take 200 tasks with the board's
 * `claim --next`, and three of them are SIGKILLed while each holds a task. What must hold is
 * what the user gets: every task done exactly once, by the teammate that claimed it last,
 * with that teammate's model's answer to that very task; a killed teammate's task reopened
 * and done by another; no task lost, none done twice.
 */

let f: SpawnFleet | undefined;
afterEach(async () => {
  // The held shells wait for this file; nothing the test started outlives it.
  if (f) writeFileSync(join(f.project, 'release'), '');
  await f?.close();
  f = undefined;
});

const script = fileURLToPath(new URL('../fixtures/tasks/drainer.yaml', import.meta.url));

const auditEvents = (event: string): Record<string, string>[] =>
  readFileSync(f!.layout.auditFile, 'utf8')
    .split('\n')
    .filter((l) => l.includes(`"event":"${event}"`))
    .map((l) => JSON.parse(l) as Record<string, string>);

/** A task's body: a token no other task's text contains. */
const bodyOf = (n: number): string => `token-${n}-of-the-crowd`;

describe('a crowd of teammates draining one board (§15)', () => {
  it(
    "20 teammates drain 200 tasks, three SIGKILLed mid-drain: every task done exactly once, each seen by one model but the killed ones' tasks",
    { timeout: 1_500_000 },
    async () => {
      f = spawnFleet({ config: 'limits:\n  max_running: 24\n' });
      writeFileSync(
        join(f.layout.agentsDir, 'drainer.md'),
        `---\nname: drainer\ndescription: drains the board\nmodel: script:${script}\nauto_claim: true\nboard: crowd\n---\nYou work the board.\n`,
      );
      const board = f.layout.board('crowd');
      // The first hundred, three of them held by whoever runs them first (early in claim order,
      // so they are claimed while most of the board is still open).
      const holds = new Map<string, string>([
        ['t5', 'h1'],
        ['t10', 'h2'],
        ['t15', 'h3'],
      ]);
      for (let n = 1; n <= 100; n++) {
        const id = `t${n}`;
        await addTask(
          f.layout,
          'crowd',
          { title: holds.has(id) ? `hold ${holds.get(id)!}` : `job ${n}`, body: bodyOf(n) },
          'human',
        );
      }
      const mates = Array.from({ length: 20 }, (_, i) => `mate-${String(i + 1).padStart(2, '0')}`);
      const log = (id: string): string => join(f!.project, `calls-${id}.jsonl`);
      // Five spawns at a time: each spawn-agent waits for its harness to take its slot.
      for (let i = 0; i < mates.length; i += 5) {
        const runs = await Promise.all(
          mates
            .slice(i, i + 5)
            .map((id) => f!.spawnAgent(['--agent', 'drainer', '--id', id], { FLOTILLA_SCRIPT_LOG: log(id) })),
        );
        for (const r of runs) expect(r.stderr).toBe('');
      }
      // Three teammates hold a task each: the folder and the holder's name are written by its shell.
      const holderOf = (h: string): string | undefined => {
        const p = join(f!.project, `holder-${h}`);
        return existsSync(p) ? readFileSync(p, 'utf8').trim() || undefined : undefined;
      };
      const victims = await eventually(
        () => {
          const got = [...holds.values()].map(holderOf);
          return got.every(Boolean) && (got as string[]);
        },
        600_000,
        'three teammates each holding a task',
      );
      expect(new Set(victims).size).toBe(3);
      for (const [id, h] of holds)
        expect(readTask(board, id)).toMatchObject({ status: 'claimed', claimed_by: holderOf(h) });
      const pids = victims.map((v) => f!.record(v).pid!);
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      // The other hundred come while the board is being drained by the seventeen left.
      for (let n = 101; n <= 200; n++)
        await addTask(f.layout, 'crowd', { title: `job ${n}`, body: bodyOf(n) }, 'human');

      const waited = await f.flotilla(['task', 'wait', '--board', 'crowd', '--timeout', '1200', '--json']);
      expect(waited.stderr).toBe('');
      expect(waited.exitCode).toBe(0);
      expect(JSON.parse(waited.stdout).counts).toEqual({ open: 0, claimed: 0, done: 200, failed: 0, cancelled: 0 });

      // What each model saw: the task prompts its calls answered (the latest user turn of each call).
      const seenBy = new Map<string, Set<string>>();
      for (const m of mates) {
        for (const call of scriptCalls(log(m))) {
          const last = userTexts(call).at(-1) ?? '';
          const token = /token-(\d+)-of-the-crowd/.exec(last);
          if (!token) continue;
          const id = `t${token[1]}`;
          seenBy.set(id, (seenBy.get(id) ?? new Set()).add(m));
        }
      }
      const doneBy = new Set<string>();
      for (let n = 1; n <= 200; n++) {
        const id = `t${n}`;
        const t = readTask(board, id)!;
        expect(t.status).toBe('done');
        // A killed teammate may have finished tasks before it took its held one.
        expect(mates).toContain(t.claimed_by);
        doneBy.add(t.claimed_by!);
        // The claimant's model's own answer to this task: it saw this task's title.
        expect(t.result).toBe(`done: Task ${id} from the board 'crowd' (you have claimed it): ${t.title}`);
        const seen = [...(seenBy.get(id) ?? [])].sort();
        if (holds.has(id)) {
          // Seen by the teammate killed holding it, and by the one that finished it: no one else.
          const victim = holderOf(holds.get(id)!)!;
          expect(t.claimed_by).not.toBe(victim);
          expect(seen).toEqual([victim, t.claimed_by!].sort());
          expect(t.notes.map((x) => x.text)).toContainEqual(
            expect.stringMatching(new RegExp(`^reopened: its claimant ${victim} `)),
          );
        } else {
          expect(seen).toEqual([t.claimed_by]);
        }
      }
      // Work was shared: more than a handful of the teammates finished tasks.
      expect(doneBy.size).toBeGreaterThan(5);
      // Exactly once, from the audit: one completion per task; one claim per task, plus one
      // for each killed teammate's; a reopening for each killed teammate's task and no other.
      const done = auditEvents('task_done')
        .map((e) => e.task)
        .sort();
      expect(done).toEqual(Array.from({ length: 200 }, (_, i) => `t${i + 1}`).sort());
      const claims = auditEvents('task_claimed').map((e) => e.task);
      expect(claims).toHaveLength(203);
      for (const id of holds.keys()) expect(claims.filter((c) => c === id)).toHaveLength(2);
      expect(
        auditEvents('task_reopened')
          .map((e) => `${e.task} ${e.agent}`)
          .sort(),
      ).toEqual([...holds].map(([id, h]) => `${id} ${holderOf(h)}`).sort());
      // The killed teammates ended as crashed, their windows gone with them.
      for (const v of victims)
        await eventually(() => f!.record(v).status === 'crashed', 120_000, `${v} recorded crashed`);
    },
  );
});
