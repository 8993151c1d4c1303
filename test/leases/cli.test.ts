import { execa, type ResultPromise } from 'execa';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord } from '../../src/fleet/registry.js';
import { listLeases } from '../../src/leases/list.js';
import { layoutColumns, rowText } from '../../src/watch/format.js';
import { FleetReader } from '../../src/watch/gather.js';
import { CLI } from '../helpers/cli.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * `flotilla lease …` as agents and people run it (docs/design.md §16): real CLI processes, each
 * acting as the agent among its ancestors (a registered, live `sh`), in a real git checkout.
 */

let f: SpawnFleet | undefined;
const procs: ResultPromise[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) p.kill('SIGKILL');
  await f?.close();
  f = undefined;
});

const GIT_ENV = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

function fleet(): SpawnFleet {
  const fl = spawnFleet();
  execFileSync('git', ['init', '-q'], { cwd: fl.project });
  return fl;
}

/**
 * An agent: a real `sh` registered as a live harness (pid and start time) that runs `script`
 * ($F is the CLI, which finds the agent among its ancestors) and then stays alive until killed.
 */
function agent(id: string, script: string): ResultPromise {
  const sh = execa('sh', ['-c', `${script}; while :; do sleep 0.2; done`], {
    cwd: f!.project,
    env: { ...f!.env, FLOTILLA_AGENT_ID: id, F: `${process.execPath} ${CLI}` },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  procs.push(sh);
  createRecord(
    f!.layout,
    recordInput(id, { status: 'working', pid: sh.pid!, pidStartTime: processStartTime(sh.pid!), cwd: f!.project }),
  );
  return sh;
}

/**
 * A file the agents' shells write, or undefined while it is not there or still empty: `echo $? > rc` creates the file
 * before it writes.
 */
function read(name: string): string | undefined {
  const path = join(f!.project, name);
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  return text === '' ? undefined : text.trim();
}

describe('flotilla lease', () => {
  it('a person takes, lists and releases leases; bad input gets one line saying what to do', async () => {
    f = fleet();
    const take = await f.flotilla(['lease', 'take', 'src/parser.ts', '--why', 'splitting it']);
    expect(take.exitCode, take.stderr).toBe(0);
    expect(take.stdout).toBe('leased to human until you release it: src/parser.ts');
    const again = await f.flotilla(['lease', 'take', 'src', '--json']);
    // A person is one holder: taking more of one's own never conflicts.
    expect(again.exitCode).toBe(0);
    const list = JSON.parse((await f.flotilla(['lease', 'list', '--json'])).stdout) as {
      checkout: string;
      leases: { path: string; holder: string }[];
    }[];
    expect(list).toEqual([
      expect.objectContaining({
        checkout: f.project,
        leases: [
          expect.objectContaining({ path: 'src/parser.ts', holder: 'human' }),
          expect.objectContaining({ path: 'src', holder: 'human' }),
        ],
      }),
    ]);
    const rel = await f.flotilla(['lease', 'release', 'src/parser.ts', 'src']);
    expect(rel.stdout).toBe('released: src/parser.ts, src');
    expect((await f.flotilla(['lease', 'list'])).stdout).toBe('no leases');
    const none = await f.flotilla(['lease', 'release', 'src']);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain('nobody holds a lease on src');
    const bad = await f.flotilla(['lease', 'take', 'x', '--ttl', 'soon']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("--ttl must be a duration like 90s, 30m, 2h or 1d, got 'soon'");
    expect((await f.flotilla(['lease', 'release'])).exitCode).toBe(2);
  }, 120_000);

  it('--wait queues behind the holder; the holder SIGKILLed frees its lease and the waiter gets it; status and the pre-commit check see it', async () => {
    f = fleet();
    const a0 = agent('a-0', '$F lease take shared.txt --why first > out.a0 2>&1; echo $? > rc.a0');
    await eventually(() => read('rc.a0') === '0', 60_000, 'a-0 to take the lease');
    void agent(
      'a-1',
      '$F lease take shared.txt > out.a1 2>&1; echo $? > rc.a1.first; $F lease take shared.txt --wait --why second > out.a1.wait 2>&1; echo $? > rc.a1',
    );
    await eventually(() => read('rc.a1.first') !== undefined, 60_000, "a-1's first try");
    expect(read('rc.a1.first')).toBe('1');
    expect(read('out.a1')).toMatch(
      /^flotilla: refused: shared\.txt is leased to agent a-0 since \S+ \(\d+ s ago\) for "first", until its task ends; nothing was leased\. Message a-0 to ask for it/,
    );
    await eventually(
      () => listLeases(f!.layout)[0]?.waiting.some((w) => w.holder === 'a-1') === true,
      60_000,
      'a-1 in line',
    );
    const status = JSON.parse((await f.flotilla(['status', '--json'])).stdout) as {
      id: string;
      leases: unknown[];
      waitingForLeases: unknown[];
    }[];
    expect(status.find((r) => r.id === 'a-0')?.leases).toEqual([
      expect.objectContaining({ path: 'shared.txt', why: 'first' }),
    ]);
    expect(status.find((r) => r.id === 'a-1')?.waitingForLeases).toEqual([
      expect.objectContaining({ paths: ['shared.txt'] }),
    ]);
    expect(read('rc.a1')).toBeUndefined();
    // The dashboard marks the holder and the waiter, naming who holds what it waits for.
    const rows = new FleetReader(f.layout).snapshot().rows;
    const line = (id: string) =>
      rowText(
        rows.find((r) => r.id === id)!,
        layoutColumns(200, rows),
        false,
      );
    expect(line('a-0')).toContain('⚿ shared.txt');
    expect(line('a-1')).toContain('⧗ shared.txt (held by a-0)');

    a0.kill('SIGKILL');
    await eventually(() => read('rc.a1') !== undefined, 60_000, 'a-1 to get the lease');
    expect(read('rc.a1')).toBe('0');
    expect(read('out.a1.wait')).toContain('leased to a-1 until your task ends: shared.txt');
    expect(listLeases(f.layout)[0]?.leases).toEqual([
      expect.objectContaining({ path: 'shared.txt', holder: 'a-1', why: 'second' }),
    ]);
    expect(readAudit(f.layout, { event: 'lease_released' }).lines).toContainEqual(
      expect.objectContaining({ agent: 'a-0', path: 'shared.txt', reason: 'its holder died (its process is gone)' }),
    );
    expect(readAudit(f.layout, { event: 'lease_queued' }).lines).toContainEqual(
      expect.objectContaining({ agent: 'a-1', holder: 'a-0' }),
    );

    // A person's commit that touches a-1's file is refused by the pre-commit check, naming a-1.
    writeFileSync(join(f.project, 'shared.txt'), 'x\n');
    writeFileSync(join(f.project, 'free.txt'), 'y\n');
    execFileSync('git', ['add', 'free.txt'], { cwd: f.project, env: { ...f.env, ...GIT_ENV } });
    expect((await f.flotilla(['lease', 'check', '--staged'])).exitCode).toBe(0);
    execFileSync('git', ['add', 'shared.txt'], { cwd: f.project, env: { ...f.env, ...GIT_ENV } });
    const check = await f.flotilla(['lease', 'check', '--staged']);
    expect(check.exitCode).toBe(1);
    expect(check.stderr).toContain(`flotilla: ${join(f.project, 'shared.txt')} is leased to a-1 since`);
    expect((await f.flotilla(['lease', 'check'])).exitCode).toBe(2);
  }, 180_000);

  it('a lease past its ttl is free for the next taker, and its expiry is audited', async () => {
    f = fleet();
    void agent('a-0', '$F lease take notes.md --ttl 1s --why brief > out.a0 2>&1; echo $? > rc.a0');
    await eventually(() => read('rc.a0') !== undefined, 60_000, 'a-0 to take the lease');
    expect(read('rc.a0'), read('out.a0')).toBe('0');
    const [held] = listLeases(f.layout)[0]!.leases;
    expect(held).toMatchObject({ path: 'notes.md', holder: 'a-0', why: 'brief' });
    // a-0 is alive and its task goes on: only the clock ends this lease.
    await eventually(() => Date.now() > Date.parse(held!.expires_at!), 60_000, 'the ttl to run out');
    const take = await f.flotilla(['lease', 'take', 'notes.md']);
    expect(take.exitCode, take.stderr).toBe(0);
    expect(listLeases(f.layout)[0]!.leases).toEqual([expect.objectContaining({ path: 'notes.md', holder: 'human' })]);
    expect(readAudit(f.layout, { event: 'lease_expired' }).lines).toContainEqual(
      expect.objectContaining({ agent: 'a-0', path: 'notes.md', reason: `its ttl ran out at ${held!.expires_at}` }),
    );
  }, 120_000);

  it('installed as a git pre-commit hook, the check refuses a commit of a file another agent holds and lets its holder commit it', async () => {
    f = fleet();
    // What a person puts in .git/hooks/pre-commit (README: `flotilla lease check --staged`).
    writeFileSync(
      join(f.project, '.git', 'hooks', 'pre-commit'),
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} lease check --staged\n`,
      { mode: 0o755 },
    );
    const ident = Object.entries(GIT_ENV)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    // a-0 takes the lease, then (once told) commits the file itself.
    void agent(
      'a-0',
      `$F lease take shared.txt --why mine > out.a0 2>&1; echo $? > rc.a0; while [ ! -e go ]; do sleep 0.2; done; git add shared.txt; ${ident} git commit -qm 'a-0 edits shared.txt' > out.commit 2>&1; echo $? > rc.commit`,
    );
    await eventually(() => read('rc.a0') !== undefined, 60_000, 'a-0 to take the lease');
    expect(read('rc.a0'), read('out.a0')).toBe('0');

    const git = (...args: string[]) =>
      execa('git', args, { cwd: f!.project, env: { ...f!.env, ...GIT_ENV }, extendEnv: false, reject: false });
    writeFileSync(join(f.project, 'shared.txt'), 'edited\n');
    await git('add', 'shared.txt');
    const refused = await git('commit', '-qm', 'a person edits shared.txt');
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain(`${join(f.project, 'shared.txt')} is leased to a-0 since`);
    expect((await git('rev-list', '--all')).stdout).toBe('');

    writeFileSync(join(f.project, 'go'), '');
    await eventually(() => read('rc.commit') !== undefined, 60_000, "a-0's commit");
    expect(read('rc.commit'), read('out.commit')).toBe('0');
    expect((await git('log', '--format=%s')).stdout).toBe('a-0 edits shared.txt');
  }, 120_000);
});
