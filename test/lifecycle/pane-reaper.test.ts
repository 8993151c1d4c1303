import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { readTask } from '../../src/tasks/store.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';
import { holderFleet } from '../tasks/holder.js';

/**
 * A root agent's harness SIGKILLed with nobody reading the fleet (§5.7): no parent agent checks
 * on it and no `status` runs, so its own pane is what reaps it. tmux can lose the SIGCHLD of a
 * pane's process (its libutempter swaps the handler out while it closes a pane) and then never
 * runs pane-died — seen in about 1 run in 10 of this test, 4 at once, before the pane's sh
 * reaped. Here the tmux server is frozen from the kill on, as such a tmux would be for this
 * pane: only the pane's sh, the harness's parent, sees the death.
 */

let f: SpawnFleet | undefined;
afterEach(async () => {
  if (f) writeFileSync(join(f.project, 'release'), '');
  await f?.close();
  f = undefined;
});

it('a root agent SIGKILLed with nobody reading: its record ends, the person gets one completion, its claim and lease go', async () => {
  f = holderFleet();
  expect((await f.flotilla(['task', 'add', 'held work'])).exitCode).toBe(0);
  const s = await f.flotilla(['spawn', '--agent', 'holder', '--id', 'root-1', 'claim it']);
  expect(s.exitCode, s.stderr).toBe(0);
  const leaseOut = join(f.project, 'lease.root-1');
  await eventually(
    () => existsSync(leaseOut) && readFileSync(leaseOut, 'utf8').includes('leased'),
    60_000,
    'root-1 to claim t1 and lease notes.md',
  );
  const rec = f.record('root-1');
  expect(rec.parentId).toBeNull();
  expect(rec.tmux).not.toBeNull();
  const server = Number(await f.tmux.tmux('display-message', '-p', '#{pid}'));
  process.kill(server, 'SIGSTOP');
  try {
    process.kill(rec.pid!, 'SIGKILL');
    await reaped(f);
  } finally {
    process.kill(server, 'SIGCONT');
  }
});

it("a cancel that needs SIGKILL still ends the agent cancelled, once: the pane's sh reaps it no sooner", async () => {
  f = spawnFleet({ config: 'limits:\n  cancel_grace_secs: 1\n', definitions: { sleeper: 'sleeper.yaml' } });
  const s = await f.flotilla(['spawn', '--agent', 'sleeper', '--id', 'stuck-1', 'sleep']);
  expect(s.exitCode, s.stderr).toBe(0);
  await eventually(() => f!.record('stuck-1').status === 'working', 60_000, 'stuck-1 working');
  // Stopped, it cannot act on SIGTERM: only the SIGKILL after the grace ends it.
  process.kill(f.record('stuck-1').pid!, 'SIGSTOP');
  const c = await f.flotilla(['cancel', 'stuck-1']);
  expect(c.exitCode, c.stderr).toBe(0);
  expect(f.record('stuck-1')).toMatchObject({ status: 'cancelled', exitReason: 'cancelled (SIGKILL after 1 s grace)' });
  // The pane's own reaper has run by now too (its sh saw status 137): still one ending.
  await eventually(
    () =>
      f!.tmux
        .tmux('display-message', '-p', '-t', f!.record('stuck-1').tmux!.paneId, '#{pane_dead}')
        .then((d) => d === '1'),
    30_000,
    'the pane dead',
  );
  const mail = completionsFrom(f, 'human', 'stuck-1');
  expect(mail.map((m) => m.status)).toEqual(['cancelled']);
  expect(f.record('stuck-1').status).toBe('cancelled');
});

/**
 * Waits, reading only files (no CLI, no tmux: nothing that reaps), until root-1 is reaped, then checks it was reaped
 * once.
 */
async function reaped(fleet: SpawnFleet): Promise<void> {
  const audit = () =>
    existsSync(fleet.layout.auditFile) ? readFileSync(fleet.layout.auditFile, 'utf8').split('\n') : [];
  await eventually(
    () =>
      fleet.record('root-1').status === 'crashed' &&
      completionsFrom(fleet, 'human', 'root-1').length > 0 &&
      readTask(fleet.layout.board('fleet'), 't1')?.status === 'open' &&
      audit().some((l) => l.includes('"event":"lease_released"') && l.includes('root-1')) &&
      audit().some((l) => l.includes('"event":"reap"') && l.includes('root-1')),
    30_000,
    'root-1 reaped: its record crashed, its completion to the person, t1 reopened, notes.md released',
  ).catch((err: unknown) => {
    throw new Error(
      `${String(err)}; record: ${fleet.record('root-1').status}; audit: ${audit()
        .filter((l) => /reap|task_|lease_/.test(l))
        .join(' | ')}`,
    );
  });
  expect(fleet.record('root-1').exitReason).toBe('killed (SIGKILL)');
  const mail = completionsFrom(fleet, 'human', 'root-1');
  expect(mail).toHaveLength(1);
  expect(mail[0]!.status).toBe('crashed');
  expect(readTask(fleet.layout.board('fleet'), 't1')?.claimed_by).toBeNull();
  expect(audit().filter((l) => l.includes('"event":"reap"') && l.includes('root-1'))).toHaveLength(1);
}
