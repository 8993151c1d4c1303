import { execa } from 'execa';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord } from '../../src/fleet/registry.js';
import { addTask, claimNext, claimTask, finishTask, releaseTask, reopenClaimsOf } from '../../src/tasks/board.js';
import { listBoard } from '../../src/tasks/list.js';
import { readTask, writeTask } from '../../src/tasks/store.js';
import { activeName } from '../../src/tasks/task.js';
import { withBoardLock } from '../../src/tasks/lock.js';
import { boardState, waitForBoard } from '../../src/tasks/wait.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';
import { writeFileAtomic } from '../../src/layout/atomic.js';
import { sleep } from '../../src/sleep.js';

let f: TempFleet;
beforeEach(() => {
  f = tempFleet('flotilla-board-');
});
afterEach(() => f.cleanup());

const B = 'fleet';
const task = (id: string) => readTask(f.layout.board(B), id)!;
const auditEvents = () =>
  readFileSync(f.layout.auditFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; task?: string; agent?: string });

/** A registered agent whose process runs (this test's child `sleep`), so its claims are live. */
async function liveAgent(id: string): Promise<{ kill(): Promise<void> }> {
  const proc = execa('sleep', ['60']);
  createRecord(
    f.layout,
    recordInput(id, { status: 'working', pid: proc.pid!, pidStartTime: processStartTime(proc.pid!) }),
  );
  return {
    async kill() {
      proc.kill('SIGKILL');
      await proc.catch(() => undefined);
    },
  };
}

describe('a task board (§15)', () => {
  it('adds, claims and finishes a task; a second claimant is refused and told who holds it', async () => {
    const t = await addTask(f.layout, B, { title: 'write the parser', body: 'in src/', labels: ['a', 'a'] }, 'human');
    expect(t).toMatchObject({ id: 't1', status: 'open', labels: ['a'], created_by: 'human', claimed_by: null });
    const a = await liveAgent('ag-a');
    await claimTask(f.layout, B, 't1', 'ag-a');
    await expect(claimTask(f.layout, B, 't1', 'ag-b')).rejects.toThrow(/already claimed by ag-a/);
    // Only the claimant (or a person) finishes it.
    await expect(finishTask(f.layout, B, 't1', 'ag-b', 'done', 'mine')).rejects.toThrow(
      /only its claimant \(ag-a\) or a person/,
    );
    const done = await finishTask(f.layout, B, 't1', 'ag-a', 'done', 'parsed');
    expect(done).toMatchObject({ status: 'done', result: 'parsed', claimed_by: 'ag-a' });
    expect(task('t1').status).toBe('done');
    await expect(finishTask(f.layout, B, 't1', 'human', 'failed', 'x')).rejects.toThrow(/already done/);
    expect(
      auditEvents()
        .filter((e) => e.event.startsWith('task_'))
        .map((e) => e.event),
    ).toEqual(['task_created', 'task_claimed', 'task_done']);
    await a.kill();
  });

  it('a task waits for its blockers: unclaimable until they are done or cancelled', async () => {
    await addTask(f.layout, B, { title: 'first' }, 'human');
    await addTask(f.layout, B, { title: 'second', blockedBy: ['t1'] }, 'human');
    await addTask(f.layout, B, { title: 'third', blockedBy: ['t2'] }, 'human');
    await expect(claimTask(f.layout, B, 't2', 'human')).rejects.toThrow(/blocked by unfinished t1/);
    // --next skips the blocked ones.
    expect((await claimNext(f.layout, B, 'human'))?.id).toBe('t1');
    expect(await claimNext(f.layout, B, 'human')).toBeNull();
    await finishTask(f.layout, B, 't1', 'human', 'done', 'ok');
    expect((await claimNext(f.layout, B, 'human'))?.id).toBe('t2');
    // A failed blocker still blocks; a cancelled one lets its dependents go.
    await finishTask(f.layout, B, 't2', 'human', 'failed', 'no');
    await expect(claimTask(f.layout, B, 't3', 'human')).rejects.toThrow(/blocked by unfinished t2/);
    expect(boardState(f.layout, B)).toMatchObject({ drained: true, stuck: ['t3'] });
    await addTask(f.layout, B, { title: 'fourth', blockedBy: ['t5'] }, 'human');
    await addTask(f.layout, B, { title: 'fifth', id: 't5' }, 'human');
    await finishTask(f.layout, B, 't5', 'human', 'cancelled', 'not needed');
    expect((await claimTask(f.layout, B, 't4', 'human')).status).toBe('claimed');
  });

  it('refuses a cycle when it is added, naming it; nothing is written', async () => {
    await addTask(f.layout, B, { title: 'a', id: 'a', blockedBy: ['b'] }, 'human');
    await addTask(f.layout, B, { title: 'c', id: 'c', blockedBy: ['a'] }, 'human');
    await expect(addTask(f.layout, B, { title: 'b', id: 'b', blockedBy: ['c'] }, 'human')).rejects.toThrow(
      /cycle b → c → a → b/,
    );
    await expect(addTask(f.layout, B, { title: 'self', id: 's', blockedBy: ['s'] }, 'human')).rejects.toThrow(
      /blocked by itself/,
    );
    expect(readTask(f.layout.board(B), 'b')).toBeUndefined();
    expect(listBoard(f.layout, B).counts.open).toBe(2);
  });

  it('claim --next takes by priority, then age', async () => {
    await addTask(f.layout, B, { title: 'low', priority: 'low' }, 'human');
    await addTask(f.layout, B, { title: 'n1' }, 'human');
    await addTask(f.layout, B, { title: 'urgent', priority: 'urgent' }, 'human');
    await addTask(f.layout, B, { title: 'n2' }, 'human');
    const order = [];
    for (let i = 0; i < 4; i++) order.push((await claimNext(f.layout, B, 'human'))!.title);
    expect(order).toEqual(['urgent', 'n1', 'n2', 'low']);
  });

  it('a released task is open again with a note; only its claimant or a person may release it', async () => {
    const a = await liveAgent('ag-a');
    await addTask(f.layout, B, { title: 'x' }, 'human');
    await claimTask(f.layout, B, 't1', 'ag-a');
    await expect(releaseTask(f.layout, B, 't1', 'ag-b')).rejects.toThrow(/only its claimant/);
    const open = await releaseTask(f.layout, B, 't1', 'ag-a', 'need a key');
    expect(open).toMatchObject({ status: 'open', claimed_by: null });
    expect(open.notes.at(-1)?.text).toBe('released by ag-a: need a key');
    await a.kill();
  });

  it("a dead claimant's task is reopened with a note of who had it: by the ending path, and by the next claim", async () => {
    const a = await liveAgent('ag-a');
    const b = await liveAgent('ag-b');
    await addTask(f.layout, B, { title: 'x' }, 'human');
    await addTask(f.layout, 'other', { title: 'y' }, 'human');
    await claimTask(f.layout, B, 't1', 'ag-a');
    await claimTask(f.layout, 'other', 't1', 'ag-a');
    await a.kill();
    // The reaper's call, on every board.
    const reopened = await reopenClaimsOf(f.layout, 'ag-a', 'killed (SIGKILL)');
    expect(reopened.map((t) => `${t.board}/${t.id}`).sort()).toEqual(['fleet/t1', 'other/t1']);
    expect(task('t1')).toMatchObject({ status: 'open', claimed_by: null });
    expect(task('t1').notes.at(-1)!.text).toBe('reopened: its claimant ag-a ended (killed (SIGKILL))');
    // No reaper ran: the next claimant finds the holder dead and takes it.
    await claimTask(f.layout, B, 't1', 'ag-b');
    await b.kill();
    const t = await claimTask(f.layout, B, 't1', 'human');
    expect(t.claimed_by).toBe('human');
    expect(t.notes.at(-1)!.text).toBe('reopened: its claimant ag-b died (its process is gone)');
    expect(auditEvents().filter((e) => e.event === 'task_reopened')).toHaveLength(3);
  });

  it('lists without reading finished tasks: counts from the ended log, the unfinished in claim order', async () => {
    for (let i = 0; i < 5; i++) await addTask(f.layout, B, { title: `t${i}` }, 'human');
    await finishTask(f.layout, B, 't1', 'human', 'done', '');
    await finishTask(f.layout, B, 't2', 'human', 'cancelled', '');
    await claimTask(f.layout, B, 't3', 'human');
    const l = listBoard(f.layout, B);
    expect(l.counts).toEqual({ open: 2, claimed: 1, done: 1, failed: 0, cancelled: 1 });
    expect(l.tasks.map((t) => t.id)).toEqual(['t3', 't4', 't5']);
    expect(l.recent.map((t) => t.id)).toEqual(['t1', 't2']);
    expect(listBoard(f.layout, B, { limit: 1 })).toMatchObject({ more: 2 });
    expect(listBoard(f.layout, B, { all: true }).tasks.map((t) => t.id)).toEqual(['t1', 't2', 't3', 't4', 't5']);
  });

  it('a writer killed between its steps leaves index entries too many, never too few, and they are repaired', async () => {
    const board = f.layout.board(B);
    await addTask(f.layout, B, { title: 'x' }, 'human');
    await addTask(f.layout, B, { title: 'y' }, 'human');
    // As if killed after writing t1 done but before its index work: active entry and no ended line.
    const t1 = task('t1');
    writeFileSync(board.task('t1'), JSON.stringify({ ...t1, status: 'done', result: 'r' }));
    // As if killed after its active entry, before the task file (t9 never written).
    writeFileSync(
      `${board.activeDir}/${activeName({ priority: 'urgent', created_at: new Date().toISOString(), id: 't9' })}`,
      '',
    );
    expect(listBoard(f.layout, B).tasks.map((t) => t.id)).toEqual(['t2']);
    // The next claim skips both and repairs them.
    expect((await claimNext(f.layout, B, 'human'))?.id).toBe('t2');
    expect(readdirSync(board.activeDir)).toHaveLength(1);
    expect(listBoard(f.layout, B).counts).toMatchObject({ done: 1, claimed: 1, open: 0 });
  });

  it("a writer killed after a finished task's ended line, before its index work: counted once, settled by the next writer", async () => {
    const board = f.layout.board(B);
    for (let i = 0; i < 3; i++) await addTask(f.layout, B, { title: `x${i}` }, 'human');
    await claimTask(f.layout, B, 't1', 'human');
    // As if killed right after appending t1's line: its task file says done, its claimed and active entries remain.
    writeFileSync(board.task('t1'), JSON.stringify({ ...task('t1'), status: 'done', result: 'r' }));
    writeFileSync(board.endedLog, 'done t1\n', { flag: 'a' });
    expect(readdirSync(board.claimedDir)).toEqual(['t1']);
    const l = listBoard(f.layout, B);
    expect(l.counts).toEqual({ open: 2, claimed: 0, done: 1, failed: 0, cancelled: 0 });
    expect(l.tasks.map((t) => t.id)).toEqual(['t2', 't3']);
    expect(l.more).toBe(0);
    expect(l.recent.map((t) => t.id)).toEqual(['t1']);
    // Any writer settles it first: the entries go, the line is not written twice.
    await addTask(f.layout, B, { title: 'x3' }, 'human');
    expect(readdirSync(board.claimedDir)).toEqual([]);
    expect(readdirSync(board.activeDir)).toHaveLength(3);
    expect(readFileSync(board.endedLog, 'utf8')).toBe('done t1\n');
    expect(listBoard(f.layout, B).counts).toEqual({ open: 3, claimed: 0, done: 1, failed: 0, cancelled: 0 });
  });

  it('a torn last line is cut off by the next writer, and the repair gives its task one whole line', async () => {
    const board = f.layout.board(B);
    for (let i = 0; i < 3; i++) await addTask(f.layout, B, { title: `x${i}` }, 'human');
    await finishTask(f.layout, B, 't1', 'human', 'done', 'r1');
    // As if killed mid-append of t2's line ("done t2" cut to "done t"): its task file says done.
    writeFileSync(board.task('t2'), JSON.stringify({ ...task('t2'), status: 'done', result: 'r2' }));
    writeFileSync(board.endedLog, 'done t', { flag: 'a' });
    // Readers count whole lines only.
    expect(listBoard(f.layout, B).counts).toMatchObject({ done: 1 });
    // The next claim cuts the torn tail, steps over t2 (done), repairs it, and claims t3.
    expect((await claimNext(f.layout, B, 'human'))?.id).toBe('t3');
    expect(readFileSync(board.endedLog, 'utf8')).toBe('done t1\ndone t2\n');
    expect(listBoard(f.layout, B).counts).toEqual({ open: 0, claimed: 1, done: 2, failed: 0, cancelled: 0 });
  });

  it('counts and the last ten finished come from the ended log whatever its length', async () => {
    const board = f.layout.board(B);
    for (let i = 0; i < 15; i++) await addTask(f.layout, B, { title: `x${i}` }, 'human');
    for (let i = 1; i <= 12; i++)
      await finishTask(f.layout, B, `t${i}`, 'human', i % 4 === 0 ? 'cancelled' : i % 5 === 0 ? 'failed' : 'done', '');
    await claimTask(f.layout, B, 't14', 'human');
    const l = listBoard(f.layout, B);
    expect(l.counts).toEqual({ open: 2, claimed: 1, done: 7, failed: 2, cancelled: 3 });
    expect(l.recent.map((t) => t.id)).toEqual(['t3', 't4', 't5', 't6', 't7', 't8', 't9', 't10', 't11', 't12']);
    expect(l.tasks.map((t) => t.id)).toEqual(['t13', 't14', 't15']);
    expect(readFileSync(board.endedLog, 'utf8').trim().split('\n')).toHaveLength(12);
  });

  it('a wait that finds the board drained while a writer is midway answers with the board as that writer leaves it', async () => {
    await addTask(f.layout, B, { title: 'the last part' }, 'human');
    const a = await liveAgent('ag-a');
    const claimed = await claimTask(f.layout, B, 't1', 'ag-a');
    const done = { ...claimed, status: 'done' as const, result: 'parsed' };
    const board = f.layout.board(B);
    let waited: ReturnType<typeof waitForBoard> | undefined;
    await withBoardLock(f.layout, B, async () => {
      // The finishing writer's first step: the task file says done; its claimed entry and ended line are to come.
      writeFileAtomic(board.task('t1'), JSON.stringify(done, null, 2) + '\n');
      waited = waitForBoard(f.layout, B, { timeoutMs: 10_000 });
      await sleep(700);
      writeTask(board, done, claimed);
    });
    const w = await waited!;
    expect(w.drained).toBe(true);
    expect(w.counts).toEqual({ open: 0, claimed: 0, done: 1, failed: 0, cancelled: 0 });
    await a.kill();
  });

  it('refuses bad input with a usage error that says what to do', async () => {
    await expect(addTask(f.layout, B, { title: '  ' }, 'human')).rejects.toMatchObject({ exitCode: 2 });
    await expect(addTask(f.layout, 'Bad Name', { title: 'x' }, 'human')).rejects.toThrow(/invalid board name/);
    await expect(addTask(f.layout, B, { title: 'x', id: '../x' }, 'human')).rejects.toThrow(/invalid task id/);
    await expect(claimTask(f.layout, B, 'nope', 'human')).rejects.toThrow(/no task 'nope' on board 'fleet'/);
    await addTask(f.layout, B, { title: 'x', id: 'dup' }, 'human');
    await expect(addTask(f.layout, B, { title: 'x', id: 'dup' }, 'human')).rejects.toThrow(/already exists/);
    // A lost counter never hands out an id in use.
    await addTask(f.layout, B, { title: 'x', id: 't1' }, 'human');
    expect((await addTask(f.layout, B, { title: 'y' }, 'human')).id).toBe('t2');
  });
});
