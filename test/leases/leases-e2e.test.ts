import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { listLeases } from '../../src/leases/list.js';
import { layoutColumns, rowText } from '../../src/watch/format.js';
import { FleetReader } from '../../src/watch/gather.js';
import { scriptCalls, userTexts } from '../helpers/scripts.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * File leases with real harnesses (docs/design.md §16): scripted models, agents spawned by
 * spawn-agent into a private tmux server, each in the default sandbox. What is asserted is what
 * the agents get: the tool results their models saw, the file on disk, the leases listed.
 */

const FIX = (name: string) => join(import.meta.dirname, '..', 'fixtures', 'leases', name);

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

function fleetWith(defs: Record<string, string>): SpawnFleet {
  const fleet = spawnFleet({ config: 'limits:\n  max_running: 16\n' });
  // A real checkout: leases are kept per git checkout, paths relative to its top.
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: fleet.project,
      env: {
        ...fleet.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    });
  git('init', '-q');
  git('commit', '--allow-empty', '-qm', 'base');
  for (const [name, script] of Object.entries(defs)) {
    writeFileSync(
      join(fleet.layout.agentsDir, `${name}.md`),
      `---\nname: ${name}\ndescription: test agent ${name}\nmodel: script:${FIX(script)}\n---\nYou are ${name}.\n`,
    );
  }
  return fleet;
}

/** The agents whose model has called the shell tool (each fixture's step after its lease). */
const atShell = (fl: SpawnFleet) =>
  new Set(
    readAudit(fl.layout, { event: 'tool_call' })
      .lines.filter((l) => l.tool === 'shell')
      .map((l) => l.agent),
  );
const holders = (fl: SpawnFleet) => listLeases(fl.layout).flatMap((v) => v.leases.map((l) => l.holder));

describe('file leases between agents', () => {
  it('ten agents race to lease one path: exactly one holds it, nine are told who does', async () => {
    f = fleetWith({ racer: 'race.yaml' });
    const ids = Array.from({ length: 10 }, (_, i) => `racer-${i}`);
    for (const id of ids) {
      const r = await f.spawnAgent(['--agent', 'racer', '--id', id, 'race for the lease']);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    // Every racer is at its shell's wait before the start.
    await eventually(() => ids.every((id) => atShell(f!).has(id)), 300_000, 'every racer waiting for go');
    writeFileSync(join(f.project, 'go'), '');
    await eventually(
      () => ids.every((id) => completionsFrom(f!, 'human', id).length === 1),
      300_000,
      'every racer to answer',
    );
    const answers = ids.map((id) => completionsFrom(f!, 'human', id)[0]!.body ?? '');
    const won = answers.filter((b) => /Result: leased to racer-\d/.test(b));
    expect(won).toHaveLength(1);
    const winner = /Result: leased to (racer-\d)/.exec(won[0]!)![1]!;
    const lost = answers.filter((b) => b.includes(`Result: refused: shared.txt is leased to agent ${winner} since`));
    expect(lost).toHaveLength(9);
    // The winner's lease outlives its task (a ttl); it is the only one.
    expect(holders(f)).toEqual([winner]);
    expect(readAudit(f.layout, { event: 'lease_refused' }).lines.filter((l) => l.holder === winner)).toHaveLength(9);
  }, 600_000);

  it("a second agent's edit of a leased file is refused naming the holder, the file unchanged; once the holder is SIGKILLed its lease is free and the retry succeeds", async () => {
    f = fleetWith({ holder: 'holder.yaml', editor: 'editor.yaml' });
    const log = join(f.project, 'calls.jsonl');
    expect((await f.spawnAgent(['--agent', 'holder', '--id', 'hold-1', 'write it'])).exitCode).toBe(0);
    // The write tool takes the lease before it writes: wait for its result (the holder's next call is its shell).
    await eventually(() => atShell(f!).has('hold-1'), 120_000, 'the holder to write shared.txt');
    expect(holders(f)).toContain('hold-1');
    const file = join(f.project, 'shared.txt');
    expect(readFileSync(file, 'utf8')).toBe("holder's text\n");

    expect(
      (await f.spawnAgent(['--agent', 'editor', '--id', 'edit-1', 'edit it'], { FLOTILLA_SCRIPT_LOG: log })).exitCode,
    ).toBe(0);
    // The editor's model saw the refusal: the holder, since when, what to do.
    const sawRefusal = () =>
      scriptCalls(log).some((c) =>
        JSON.stringify(c.prompt).includes('refused: shared.txt is leased to agent hold-1 since'),
      );
    await eventually(sawRefusal, 120_000, "the editor's model to see the refusal");
    const seen = JSON.stringify(scriptCalls(log).map((c) => c.prompt));
    expect(seen).toMatch(/your edit was not made and the file is unchanged/);
    expect(seen).toMatch(/Message hold-1 to ask for it/);
    expect(readFileSync(file, 'utf8')).toBe("holder's text\n");
    expect(readAudit(f.layout, { event: 'lease_refused' }).lines).toContainEqual(
      expect.objectContaining({ agent: 'edit-1', holder: 'hold-1', path: 'shared.txt', via: 'edit' }),
    );

    // The holder dies without a word: no ending of its own, its window left as it was.
    process.kill(f.record('hold-1').pid!, 'SIGKILL');
    await eventually(() => !holders(f!).includes('hold-1'), 60_000, "the dead holder's lease to lapse");
    writeFileSync(join(f.project, 'retry'), '');
    await eventually(() => completionsFrom(f!, 'human', 'edit-1').length === 1, 120_000, "the editor's answer");
    expect(completionsFrom(f, 'human', 'edit-1')[0]!.body).toContain('Final: Replaced 1 occurrence in shared.txt');
    expect(readFileSync(file, 'utf8')).toBe("editor's text\n");
    // Its lease ended with its task.
    await eventually(() => holders(f!).length === 0, 60_000, "the editor's lease to end with its task");
    expect(userTexts(scriptCalls(log).at(-1)!).join('')).not.toContain('[script exhausted]');
  }, 600_000);

  it('a lease in the main checkout holds in every worktree of the repository: the worktree agent is refused, then writes once it is released', async () => {
    f = fleetWith({ wt: 'worktree.yaml' });
    const take = await f.flotilla(['lease', 'take', 'shared.txt', '--why', 'rewriting it myself']);
    expect(take.exitCode, take.stderr).toBe(0);
    expect((await f.spawnAgent(['--agent', 'wt', '--id', 'wt-a', '--worktree', 'write it'])).exitCode).toBe(0);
    await eventually(
      () => completionsFrom(f!, 'human', 'wt-a').length === 1,
      300_000,
      "the first worktree agent's answer",
    );
    // Its own folder is a git worktree, yet the person's lease on the same file of the repository stops it.
    expect(f.record('wt-a').cwd).not.toBe(f.project);
    const refusedBody = completionsFrom(f, 'human', 'wt-a')[0]!.body;
    expect(refusedBody, refusedBody).toMatch(
      /Final: refused: shared\.txt is leased to a person \(human\) since \S+ \(\d+ s ago\) for "rewriting it myself"/,
    );
    expect(readFileSync(join(f.record('wt-a').cwd, 'shared.txt'), { encoding: 'utf8', flag: 'a+' })).toBe('');
    expect(readAudit(f.layout, { event: 'lease_refused' }).lines.map((l) => [l.agent, l.path, l.checkout])).toEqual([
      ['wt-a', 'shared.txt', f.project],
    ]);
    // Released, the next worktree agent writes it, and its lease is the repository's.
    expect((await f.flotilla(['lease', 'release', 'shared.txt'])).exitCode).toBe(0);
    expect((await f.spawnAgent(['--agent', 'wt', '--id', 'wt-b', '--worktree', 'write it'])).exitCode).toBe(0);
    await eventually(
      () => completionsFrom(f!, 'human', 'wt-b').length === 1,
      300_000,
      "the second worktree agent's answer",
    );
    expect(completionsFrom(f, 'human', 'wt-b')[0]!.body).toContain('Final: Created shared.txt');
    expect(readFileSync(join(f.record('wt-b').cwd, 'shared.txt'), 'utf8')).toBe('mine\n');
    const taken = readAudit(f.layout, { event: 'lease_taken' }).lines.filter((l) => l.agent === 'wt-b');
    expect(taken.map((l) => [l.path, l.checkout])).toEqual([['shared.txt', f.project]]);
  }, 600_000);

  it("flotilla lease from an agent's sandboxed shell goes through its door: the lease is the agent's", async () => {
    f = fleetWith({ door: 'door.yaml' });
    expect((await f.spawnAgent(['--agent', 'door', '--id', 'door-1', 'lease it'])).exitCode).toBe(0);
    await eventually(() => completionsFrom(f!, 'human', 'door-1').length === 1, 120_000, 'the answer');
    const body = completionsFrom(f, 'human', 'door-1')[0]!.body;
    expect(body).toMatch(/Shell: leased to door-1 until \S+: notes\.md rc=0/);
    const [view] = listLeases(f.layout);
    expect(view?.leases).toEqual([expect.objectContaining({ path: 'notes.md', holder: 'door-1', why: 'door-test' })]);
    // Its ttl keeps it past the task; status --json lists it with its holder.
    const status = JSON.parse((await f.flotilla(['status', '--json'])).stdout) as {
      id: string;
      leases: { path: string }[];
    }[];
    expect(status.find((r) => r.id === 'door-1')?.leases).toEqual([expect.objectContaining({ path: 'notes.md' })]);
  }, 300_000);

  it("lease_paths with wait queues the agent, shown as waiting; closing the holder's window frees the lease and the waiter is told it is its own", async () => {
    f = fleetWith({ holder: 'holder.yaml', waiter: 'waiter.yaml' });
    expect((await f.spawnAgent(['--agent', 'holder', '--id', 'hold-2', 'write it'])).exitCode).toBe(0);
    await eventually(() => atShell(f!).has('hold-2'), 120_000, 'the holder to write shared.txt');
    expect(holders(f)).toContain('hold-2');
    expect((await f.spawnAgent(['--agent', 'waiter', '--id', 'wait-2', 'lease it'])).exitCode).toBe(0);
    await eventually(
      () => listLeases(f!.layout)[0]?.waiting.some((w) => w.holder === 'wait-2') === true,
      120_000,
      'the waiter in line',
    );
    // Seen while it waits: status --json and the dashboard name what it waits for and who holds it.
    const status = JSON.parse((await f.flotilla(['status', '--json'])).stdout) as {
      id: string;
      waitingForLeases: unknown[];
    }[];
    expect(status.find((r) => r.id === 'wait-2')?.waitingForLeases).toEqual([
      expect.objectContaining({ paths: ['shared.txt'], heldBy: ['hold-2'] }),
    ]);
    const rows = new FleetReader(f.layout).snapshot().rows;
    expect(
      rowText(
        rows.find((r) => r.id === 'wait-2')!,
        layoutColumns(200, rows),
        false,
      ),
    ).toContain('⧗ shared.txt (held by hold-2)');
    expect(completionsFrom(f, 'human', 'wait-2')).toEqual([]);

    await f.tmux.tmux('kill-window', '-t', f.record('hold-2').tmux!.windowId);
    await eventually(() => completionsFrom(f!, 'human', 'wait-2').length === 1, 120_000, "the waiter's answer");
    expect(completionsFrom(f, 'human', 'wait-2')[0]!.body).toContain(
      'Result: leased to wait-2 until your task ends: shared.txt',
    );
    expect(readAudit(f.layout, { event: 'lease_queued' }).lines).toContainEqual(
      expect.objectContaining({ agent: 'wait-2', holder: 'hold-2', path: 'shared.txt' }),
    );
    expect(readAudit(f.layout, { event: 'lease_released' }).lines).toContainEqual(
      expect.objectContaining({ agent: 'hold-2', path: 'shared.txt', reason: expect.stringMatching(/^its holder/) }),
    );
  }, 600_000);
});
