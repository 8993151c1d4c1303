import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { selfProcess } from '../../src/fleet/proc.js';
import { createRecord } from '../../src/fleet/registry.js';
import { leaseForEdit } from '../../src/leases/leases.js';
import { readLeaseFile } from '../../src/leases/store.js';
import { compileSources, type CompiledSources } from '../fleet/helpers/compile.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';

/**
 * A lease's holder is judged alive or gone by one function (fleet/proc.ts isProcessAlive), from
 * what every process records about itself (selfProcess). A command an agent runs is in a pid
 * namespace of its own (docs/security.md), where `process.pid` is a namespace-local number: a
 * lease lock named by it read as held by a process that is gone, and a second agent's edit
 * broke in and leased the file the first was being given (docs/design.md §16).
 */

let compiled: CompiledSources;
let fleet: TempFleet | undefined;
const children: ChildProcess[] = [];

beforeAll(() => {
  compiled = compileSources(['src/leases/store.ts', 'src/leases/lease.ts', 'src/layout/layout.ts']);
});
afterAll(() => compiled.cleanup());
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  fleet?.cleanup();
  fleet = undefined;
});

/** The next pid a fresh namespace would give that names no process on the host. */
function pidFreeOnHost(): number {
  const host = new Set(readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number));
  let pid = 3;
  while (host.has(pid)) pid++;
  return pid;
}

describe('lease holders judged from inside a pid namespace', () => {
  it("a lease being taken from an agent's namespaced command is not broken into: the second agent's edit is refused", async () => {
    fleet = tempFleet();
    const f = fleet;
    mkdirSync(join(f.project, '.git'));
    mkdirSync(join(f.project, 'src'));
    const file = join(f.project, 'src', 'app.ts');
    // Both agents are live harnesses: this test's own process stands for each.
    const me = selfProcess();
    for (const id of ['alpha', 'beta']) createRecord(f.layout, recordInput(id, { status: 'working', pid: me.pid, pidStartTime: me.start, cwd: f.project, task: 1 }));

    // alpha's command, in its own pid namespace (as `unshare` runs it: the host's /proc), takes
    // the checkout's lease lock and, mid-take, leases src/app.ts to alpha. Its namespace pid
    // names no process on the host.
    const local = pidFreeOnHost();
    const marker = join(f.project, 'locked');
    const script = `
      const { withLeaseLock, readLeaseFile, writeLeaseFile } = await import(${JSON.stringify(join(compiled.srcDir, 'leases/store.js'))});
      const { layoutFor } = await import(${JSON.stringify(join(compiled.srcDir, 'layout/layout.js'))});
      const { writeFileSync } = await import('node:fs');
      if (process.pid !== ${local}) throw new Error('namespace pid ' + process.pid + ', expected ${local}');
      const layout = layoutFor(${JSON.stringify(f.layout.root)}, ${JSON.stringify(f.project)});
      await withLeaseLock(layout, ${JSON.stringify(f.project)}, async () => {
        const file = readLeaseFile(layout, ${JSON.stringify(f.project)});
        writeFileSync(${JSON.stringify(marker)}, '');
        await new Promise((r) => setTimeout(r, 1500));
        file.leases.push({ path: 'src/app.ts', holder: 'alpha', why: 'write src/app.ts', taken_at: new Date().toISOString(), expires_at: null, task: 1 });
        writeLeaseFile(layout, file);
      });`;
    const burn = `i=1; while [ $i -lt ${local - 1} ]; do /bin/true; i=$((i+1)); done; "$@"`;
    const holder = spawn('unshare', ['--pid', '--fork', '--map-current-user', 'sh', '-c', burn, 'sh', process.execPath, '--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(holder);
    const exited = new Promise<number | null>((r) => holder.on('exit', (code) => r(code)));
    await eventually(() => expect(existsSync(marker)).toBe(true));

    // beta's write arrives while alpha's take holds the lock: it waits, then finds alpha's lease.
    const outcome = await leaseForEdit(f.layout, file, 'beta', 1, 'write');
    expect(await exited).toBe(0);
    expect(outcome.ok).toBe(false);
    expect(outcome.ok ? null : outcome.conflict.lease.holder).toBe('alpha');
    expect(readLeaseFile(f.layout, f.project).leases.map((l) => [l.holder, l.path])).toEqual([['alpha', 'src/app.ts']]);
  });
});
