import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
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
 * broke in and leased the file the first was being given.
 */

let compiled: CompiledSources;
let fleet: TempFleet | undefined;
const children: ChildProcess[] = [];

beforeAll(() => {
  compiled = compileSources([
    'src/leases/store.ts',
    'src/leases/lease.ts',
    'src/leases/leases.ts',
    'src/fleet/proc.ts',
    'src/layout/layout.ts',
  ]);
});
afterAll(() => compiled.cleanup());
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  fleet?.cleanup();
  fleet = undefined;
});

/** The next pid a fresh namespace would give that names no process on the host. */
function pidFreeOnHost(): number {
  const host = new Set(
    readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .map(Number),
  );
  let pid = 3;
  while (host.has(pid)) pid++;
  return pid;
}

describe('lease holders judged from inside a pid namespace', () => {
  it("a lease being taken from an agent's namespaced command is not broken into: the second agent's edit is refused", async () => {
    fleet = tempFleet();
    const f = fleet;
    execFileSync('git', ['init', '-q'], { cwd: f.project });
    mkdirSync(join(f.project, 'src'));
    const file = join(f.project, 'src', 'app.ts');
    // Both agents are live harnesses: this test's own process stands for each.
    const me = selfProcess();
    for (const id of ['alpha', 'beta'])
      createRecord(
        f.layout,
        recordInput(id, { status: 'working', pid: me.pid, pidStartTime: me.start, cwd: f.project, task: 1 }),
      );

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
    const holder = spawn(
      'unshare',
      [
        '--pid',
        '--fork',
        '--map-current-user',
        'sh',
        '-c',
        burn,
        'sh',
        process.execPath,
        '--input-type=module',
        '-e',
        script,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
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

  it(
    '50 holder/editor pairs, holders in pid namespaces, both cores busy: every edit refused, no lease released',
    { timeout: 600_000 },
    async () => {
      fleet = tempFleet();
      const f = fleet;
      execFileSync('git', ['init', '-q'], { cwd: f.project });
      // Both cores busy for the whole run.
      for (let i = 0; i < 2; i++) children.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
      const pairs = 50;
      const batch = 10;
      const editor = selfProcess();
      for (let i = 0; i < pairs; i++)
        createRecord(
          f.layout,
          recordInput(`e-${i}`, {
            status: 'working',
            pid: editor.pid,
            pidStartTime: editor.start,
            cwd: f.project,
            task: 1,
          }),
        );
      const refused: string[] = [];
      for (let first = 0; first < pairs; first += batch) {
        const ids = Array.from({ length: batch }, (_, k) => first + k);
        // Each holder, as a command in its agent's pid namespace, names itself (selfProcess); the
        // test registers that as the agent's harness (as start-steps.ts does), then the holder
        // writes its file (the write takes the lease) and stays alive.
        const holders = ids.map((i) => {
          const out = join(f.project, `holder-${i}.json`);
          const go = join(f.project, `go-${i}`);
          const script = `
          const { selfProcess } = await import(${JSON.stringify(join(compiled.srcDir, 'fleet/proc.js'))});
          const { leaseForEdit } = await import(${JSON.stringify(join(compiled.srcDir, 'leases/leases.js'))});
          const { layoutFor } = await import(${JSON.stringify(join(compiled.srcDir, 'layout/layout.js'))});
          const { existsSync, writeFileSync } = await import('node:fs');
          const layout = layoutFor(${JSON.stringify(f.layout.root)}, ${JSON.stringify(f.project)});
          writeFileSync(${JSON.stringify(out)} + '.tmp', JSON.stringify(selfProcess()));
          (await import('node:fs')).renameSync(${JSON.stringify(out)} + '.tmp', ${JSON.stringify(out)});
          while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 20));
          const r = await leaseForEdit(layout, ${JSON.stringify(join(f.project, 'f'))} + ${i} + '.ts', 'h-${i}', 1, 'write');
          writeFileSync(${JSON.stringify(out)} + '.held', r.ok ? 'held' : 'refused');
          setInterval(() => undefined, 1000);`;
          const p = spawn(
            'unshare',
            ['--pid', '--fork', '--map-current-user', process.execPath, '--input-type=module', '-e', script],
            { stdio: ['ignore', 'ignore', 'inherit'] },
          );
          children.push(p);
          return { i, out, go };
        });
        for (const h of holders) {
          await eventually(() => expect(existsSync(h.out)).toBe(true), 120_000);
          const named = JSON.parse(readFileSync(h.out, 'utf8')) as { pid: number; start: string };
          createRecord(
            f.layout,
            recordInput(`h-${h.i}`, {
              status: 'working',
              pid: named.pid,
              pidStartTime: named.start,
              cwd: f.project,
              task: 1,
            }),
          );
          writeFileSync(h.go, '');
        }
        for (const h of holders)
          await eventually(
            () => expect(existsSync(`${h.out}.held`) && readFileSync(`${h.out}.held`, 'utf8')).toBe('held'),
            120_000,
          );
        // The editors come while the holders live: each edit must be refused, naming its holder.
        const outcomes = await Promise.all(
          ids.map((i) => leaseForEdit(f.layout, join(f.project, `f${i}.ts`), `e-${i}`, 1, 'edit')),
        );
        outcomes.forEach((o, k) => {
          if (!o.ok && o.conflict.lease.holder === `h-${ids[k]}`) refused.push(`e-${ids[k]}`);
        });
      }
      expect(refused).toHaveLength(pairs);
      expect(readAudit(f.layout, { event: 'lease_released' }).lines).toEqual([]);
      expect(readAudit(f.layout, { event: 'lease_taken' }).lines).toHaveLength(pairs);
    },
  );
});
