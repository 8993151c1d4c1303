import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { processStartTime } from '../../src/fleet/proc.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FlotillaError } from '../../src/errors.js';
import { createRecord, endRecord, getRecord, updateRecord } from '../../src/fleet/registry.js';
import { eventually } from '../helpers/tmux.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';
import { compileSources, type CompiledSources } from './helpers/compile.js';

/**
 * Record writes from several processes (a vendor agent's shim, its CLI's hook processes,
 * `flotilla cancel`) each read, change and write one record: none may lose another's change,
 * and none may bring an ended agent back; a lock holder killed mid-change stops nobody
 * (src/fleet/file-lock.ts).
 */

let compiled: CompiledSources;
let fleet: TempFleet;
const children: ChildProcess[] = [];

beforeAll(() => {
  compiled = compileSources([
    'src/fleet/registry.ts',
    'src/fleet/file-lock.ts',
    'src/tasks/lock.ts',
    'src/layout/layout.ts',
  ]);
});
afterAll(() => compiled.cleanup());
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  fleet?.cleanup();
});

/** A Node process running `body` with the registry module and the fleet's layout in scope. */
function writer(body: string): Promise<number | null> {
  const script = `
    const { updateRecord } = await import(${JSON.stringify(join(compiled.srcDir, 'fleet/registry.js'))});
    const { withFileLock, withFileLockSync } = await import(${JSON.stringify(join(compiled.srcDir, 'fleet/file-lock.js'))});
    const { withBoardLock } = await import(${JSON.stringify(join(compiled.srcDir, 'tasks/lock.js'))});
    const { layoutFor } = await import(${JSON.stringify(join(compiled.srcDir, 'layout/layout.js'))});
    const layout = layoutFor(${JSON.stringify(fleet.layout.root)}, ${JSON.stringify(fleet.project)});
    ${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

/**
 * A process holding board `name`'s lock until it is killed, once it holds it. Its exit is a
 * field, not the resolved value: an async function would wait for it.
 */
async function boardHolder(name: string): Promise<{ proc: ChildProcess; exited: Promise<number | null> }> {
  const marker = join(fleet.project, 'holding');
  const exited = writer(`
    const { writeFileSync } = await import('node:fs');
    await withBoardLock(layout, ${JSON.stringify(name)}, () => {
      writeFileSync(${JSON.stringify(marker)}, '');
      return new Promise(() => setInterval(() => undefined, 1000));
    });`);
  const proc = children.at(-1)!;
  await eventually(() => expect(existsSync(marker)).toBe(true));
  return { proc, exited };
}

describe('locks across processes', () => {
  it('six processes each adding 40 turns to one record: all 240 are there', async () => {
    fleet = tempFleet();
    createRecord(fleet.layout, recordInput('busy', { status: 'working' }));
    const codes = await Promise.all(
      Array.from({ length: 6 }, () =>
        writer(`
      for (let i = 0; i < 40; i++) updateRecord(layout, 'busy', (now) => ({ turns: now.turns + 1 }));`),
      ),
    );
    expect(codes).toEqual([0, 0, 0, 0, 0, 0]);
    expect(getRecord(fleet.layout, 'busy').turns).toBe(240);
  });

  it('a writer busy with lastLine never brings a cancelled agent back to working', async () => {
    fleet = tempFleet();
    createRecord(fleet.layout, recordInput('victim', { status: 'working' }));
    const busy = writer(`for (let i = 0; i < 400; i++) updateRecord(layout, 'victim', { lastLine: 'step ' + i });`);
    await eventually(() => expect(getRecord(fleet.layout, 'victim').lastLine).toMatch(/^step /));
    expect(endRecord(fleet.layout, 'victim', { status: 'cancelled' }).ended).toBe(true);
    expect(await busy).toBe(0);
    const rec = getRecord(fleet.layout, 'victim');
    expect(rec.status).toBe('cancelled');
    expect(rec.lastLine).toBe('step 399');
  });

  it('a writer SIGKILLed while it holds the lock does not stop the next one', async () => {
    fleet = tempFleet();
    createRecord(fleet.layout, recordInput('held', { status: 'working' }));
    const marker = join(fleet.project, 'holding');
    const holder = writer(`
      const { writeFileSync } = await import('node:fs');
      withFileLockSync(layout.recordLock('held'), { timeoutMs: 1000, busy: () => new Error('busy') }, () => {
        writeFileSync(${JSON.stringify(marker)}, '');
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
      });`);
    await eventually(() => expect(existsSync(marker)).toBe(true));
    children.at(-1)!.kill('SIGKILL');
    await holder;
    expect(updateRecord(fleet.layout, 'held', { lastLine: 'after the kill' }).lastLine).toBe('after the kill');
    expect(getRecord(fleet.layout, 'held').lastLine).toBe('after the kill');
  });

  it('a board lock holder SIGKILLed mid-change does not stop the next writer, and a live one is waited for', async () => {
    fleet = tempFleet();
    const holder = await boardHolder('team');
    // While the holder lives, a writer with a short wait is refused, naming the board.
    const { withBoardLock } = await import('../../src/tasks/lock.js');
    const { withFileLock } = await import('../../src/fleet/file-lock.js');
    await expect(
      withFileLock(
        fleet.layout.board('team').lock,
        { timeoutMs: 300, busy: () => new FlotillaError('still held') },
        () => 'mine',
      ),
    ).rejects.toThrow('still held');
    holder.proc.kill('SIGKILL');
    await holder.exited;
    expect(await withBoardLock(fleet.layout, 'team', () => 'mine')).toBe('mine');
  });

  it('waiters take the lock in the order they came: one that just let go and asks again waits behind them', async () => {
    fleet = tempFleet();
    const { withFileLock } = await import('../../src/fleet/file-lock.js');
    const lock = fleet.layout.board('line').lock;
    const wait = { timeoutMs: 60_000, busy: () => new FlotillaError('busy') };
    const order: string[] = [];
    let letGo!: () => void;
    const held = new Promise<void>((r) => {
      letGo = r;
    });
    const first = withFileLock(lock, wait, async () => {
      order.push('first');
      await held;
    });
    // The second comes while the first holds it: it joins the line.
    const second = withFileLock(lock, wait, () => {
      order.push('second');
    });
    await eventually(() => expect(readdirSync(`${lock}.queue`)).toHaveLength(1));
    letGo();
    await first;
    // The first asks again at once, the lock free and the second still asleep: it must wait its turn.
    await withFileLock(lock, wait, () => {
      order.push('first again');
    });
    await second;
    expect(order).toEqual(['first', 'second', 'first again']);
    expect(readdirSync(`${lock}.queue`)).toEqual([]);
  });

  it('a waiter SIGKILLed in line holds up no one behind it', async () => {
    fleet = tempFleet();
    const holder = await boardHolder('team');
    const queue = `${fleet.layout.board('team').lock}.queue`;
    const waiter = writer(`await withBoardLock(layout, 'team', () => undefined);`);
    const waiterProc = children.at(-1)!;
    await eventually(() => expect(existsSync(queue) && readdirSync(queue)).toHaveLength(1));
    const ticket = readdirSync(queue)[0]!;
    expect(ticket).toContain(`-${waiterProc.pid}-`);
    waiterProc.kill('SIGKILL');
    await waiter;
    holder.proc.kill('SIGKILL');
    await holder.exited;
    // Its ticket is still first in line, naming a process that is gone: stepped over and removed.
    expect(readdirSync(queue)).toEqual([ticket]);
    const { withBoardLock } = await import('../../src/tasks/lock.js');
    expect(await withBoardLock(fleet.layout, 'team', () => 'mine')).toBe('mine');
    expect(readdirSync(queue)).toEqual([]);
  });

  it("a dead holder's lock broken by several at once goes to one of them at a time", async () => {
    fleet = tempFleet();
    const lock = fleet.layout.board('broken').lock;
    mkdirSync(dirname(lock), { recursive: true });
    // A holder that is gone: a process that ran and exited, named as a lock names its holder.
    const gone = spawn(process.execPath, ['-e', '']);
    const start = await new Promise<string>((r) =>
      gone.stdout!.once('end', () => r(processStartTime(gone.pid!) ?? '')),
    );
    const deadName = `${gone.pid} ${start || '1'}`;
    await new Promise((r) => gone.on('exit', r));
    const log = join(fleet.project, 'log');
    const rounds = 25;
    const workers = 6;
    // Each round: the lock is left by the dead holder, then every worker asks for it at once
    // (a go file they all watch); inside, each writes in and out around a short pause.
    const go = (k: number) => join(fleet.project, `go-${k}`);
    const done = (k: number, w: number) => join(fleet.project, `done-${k}-${w}`);
    const running = Array.from({ length: workers }, (_, w) =>
      writer(`
      const { appendFileSync, existsSync, writeFileSync } = await import('node:fs');
      const nap = new Int32Array(new SharedArrayBuffer(4));
      for (let k = 0; k < ${rounds}; k++) {
        while (!existsSync(${JSON.stringify(go(0))}.replace(/0$/, String(k)))) Atomics.wait(nap, 0, 0, 1);
        withFileLockSync(${JSON.stringify(lock)}, { timeoutMs: 30000, busy: () => new Error('busy') }, () => {
          appendFileSync(${JSON.stringify(log)}, 'in ${w}\\n');
          Atomics.wait(nap, 0, 0, 5);
          appendFileSync(${JSON.stringify(log)}, 'out ${w}\\n');
        });
        writeFileSync(${JSON.stringify(join(fleet.project, 'done-'))} + k + '-${w}', '');
      }`),
    );
    for (let k = 0; k < rounds; k++) {
      symlinkSync(deadName, lock);
      writeFileSync(go(k), '');
      await eventually(
        () => expect(Array.from({ length: workers }, (_, w) => existsSync(done(k, w))).every(Boolean)).toBe(true),
        60_000,
      );
      expect(existsSync(lock)).toBe(false);
    }
    expect(await Promise.all(running)).toEqual(Array(workers).fill(0));
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(rounds * workers * 2);
    // Never two inside: every 'in' is followed by its own 'out'.
    for (let i = 0; i < lines.length; i += 2) expect(lines[i + 1]).toBe(lines[i]!.replace('in', 'out'));
  });
});
