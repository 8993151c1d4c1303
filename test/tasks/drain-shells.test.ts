import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/fleet/proc.js';
import { addTask } from '../../src/tasks/board.js';
import { claimedIds, readTask } from '../../src/tasks/store.js';
import { requireTool } from '../helpers/requires.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * A crowd draining one board through the CLI (docs/design.md §15): 20 agents —
 * real harnesses in a real tmux server, each on the scripted model — run one shell call each
 * that loops `flotilla task claim --next` → work → `flotilla task done` over 200 tasks. The
 * shells run under the default sandbox (bubblewrap, their own pid namespace, the fleet root
 * read-only), so every claim and done goes through the agent's door and runs on the host as
 * the agent. While they drain, random claimants are SIGKILLed holding a task. What must hold
 * is what the user gets: every task done exactly once, none left claimed by the dead.
 */

let f: SpawnFleet | undefined;
afterEach(async () => {
  // The shells stop at this file; nothing the test started outlives it.
  if (f) writeFileSync(join(f.project, 'stop'), '');
  await f?.close();
  f = undefined;
});

const script = fileURLToPath(new URL('../fixtures/tasks/shell-drainer.yaml', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('a crowd draining one board from sandboxed shells (§15)', () => {
  it(
    '20 agents × 200 tasks with `task claim --next`, random claimants SIGKILLed mid-drain: every task done exactly once, none stuck',
    { timeout: 1_800_000 },
    async () => {
      requireTool('bwrap');
      f = spawnFleet({
        config: 'limits:\n  max_running: 24\n  timeout_secs: 1800\ntools:\n  shell_timeout_secs: 1500\n',
      });
      writeFileSync(
        join(f.layout.agentsDir, 'shell-drainer.md'),
        `---\nname: shell-drainer\ndescription: drains the board from its shell\nmodel: script:${script}\n---\nYou work the board.\n`,
      );
      const board = f.layout.board('fleet');
      for (let n = 1; n <= 200; n++) await addTask(f.layout, 'fleet', { title: `job ${n}` }, 'human');
      const mates = Array.from({ length: 20 }, (_, i) => `mate-${String(i + 1).padStart(2, '0')}`);

      // While they drain: every 2 s, one agent that holds a task now, picked at random, is
      // SIGKILLed (four in all), its held tasks noted.
      const killed = new Map<string, string[]>();
      let draining = true;
      const killer = (async () => {
        while (draining && killed.size < 4) {
          await sleep(2000);
          const holders = new Map<string, string[]>();
          for (const id of claimedIds(board)) {
            const by = readTask(board, id)?.claimed_by;
            if (by && mates.includes(by) && !killed.has(by)) holders.set(by, [...(holders.get(by) ?? []), id]);
          }
          const live = [...holders].filter(([by]) => {
            const rec = f!.record(by);
            return rec.pid !== null && isProcessAlive(rec.pid, rec.pidStartTime);
          });
          if (live.length === 0) continue;
          const [victim, held] = live[Math.floor(Math.random() * live.length)]!;
          process.kill(f!.record(victim).pid!, 'SIGKILL');
          killed.set(victim, held);
        }
      })();

      // Five spawns at a time: each spawn-agent waits for its harness to take its slot.
      for (let i = 0; i < mates.length; i += 5) {
        const runs = await Promise.all(
          mates.slice(i, i + 5).map((id) => f!.spawnAgent(['--agent', 'shell-drainer', '--id', id, 'drain the board'])),
        );
        for (const r of runs) expect(r.stderr).toBe('');
      }
      const waited = await f.flotilla(['task', 'wait', '--timeout', '1500', '--json']);
      draining = false;
      await killer;
      expect(waited.stderr).toBe('');
      expect(waited.exitCode).toBe(0);
      expect(JSON.parse(waited.stdout).counts).toEqual({ open: 0, claimed: 0, done: 200, failed: 0, cancelled: 0 });
      // The drain outlasted the kills: claimants died holding tasks.
      expect(killed.size).toBeGreaterThanOrEqual(2);

      // Every shell ran in the sandbox: a pid namespace of its own, not this host's.
      const hostNs = readlinkSync('/proc/self/ns/pid');
      for (const m of mates) {
        const ns = join(f.project, `ns.${m}`);
        expect(existsSync(ns), `${m}'s shell ran`).toBe(true);
        expect(readFileSync(ns, 'utf8').trim()).not.toBe(hostNs);
      }

      const audit = readFileSync(f.layout.auditFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, string>);
      const events = (event: string): Record<string, string>[] =>
        audit.filter((e) => e.event === event && e.board === 'fleet');
      const ids = Array.from({ length: 200 }, (_, i) => `t${i + 1}`);
      // Exactly once: one completion per task, by the agent whose claim stood.
      expect(
        events('task_done')
          .map((e) => e.task)
          .sort(),
      ).toEqual([...ids].sort());
      const worked = readFileSync(join(f.project, 'worked.log'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' '));
      for (const id of ids) {
        const t = readTask(board, id)!;
        expect(t.status).toBe('done');
        expect(mates).toContain(t.claimed_by);
        // The result is the claimant's own shell's words: its done landed, through its door.
        expect(t.result).toBe(`by ${t.claimed_by!}`);
        expect(worked.filter(([w, by]) => w === id && by === t.claimed_by)).toHaveLength(1);
      }
      // Work was shared across the crowd.
      expect(new Set(ids.map((id) => readTask(board, id)!.claimed_by)).size).toBeGreaterThan(5);
      // A task is claimed twice only when its first claimant died holding it: reopened from a
      // killed agent, then finished by another.
      const reopened = events('task_reopened');
      for (const e of reopened) expect([...killed.keys()]).toContain(e.agent);
      const claims = events('task_claimed').map((e) => e.task);
      for (const id of ids)
        expect(claims.filter((c) => c === id).length).toBe(1 + reopened.filter((e) => e.task === id).length);
      // A task a victim held when it was killed is done: by the victim (its done was already on
      // its way through the door) or, reopened, by another agent.
      for (const [victim, held] of killed) {
        for (const id of held) {
          const t = readTask(board, id)!;
          if (t.claimed_by === victim) continue;
          expect(t.notes.map((n) => n.text)).toContainEqual(
            expect.stringMatching(new RegExp(`^reopened: its claimant ${victim} `)),
          );
        }
      }
      expect(reopened.length).toBeGreaterThanOrEqual(1);
      // The killed agents ended as crashed (their windows' reaper), and hold nothing.
      for (const v of killed.keys())
        await eventually(() => f!.record(v).status === 'crashed', 120_000, `${v} recorded crashed`);
    },
  );
});
