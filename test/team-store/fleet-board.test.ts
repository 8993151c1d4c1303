import { execa } from 'execa';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maildir } from '../../src/inbox/maildir.js';
import { FLOTILLA_COMMAND } from '../helpers/sshd.js';
import { eventually } from '../helpers/tmux.js';
import { trustProject } from '../helpers/trust.js';
import { hostsOnBus, type TwoHosts } from '../hosts/helpers.js';

/**
 * One board for the whole fleet on a `nats://` bus (docs/design.md §15, §18): two hosts — this
 * machine's fleet and `r1`, reached only through a real sshd — on one real nats-server. A
 * command "on r1" runs there over ssh, in r1's project, with r1's HOME and fleet root.
 */
const hosts = hostsOnBus();

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs a shell command on r1 over ssh, in its project with its environment. */
async function onR1(pair: TwoHosts, command: string): Promise<Run> {
  const env = Object.entries(pair.remote.env)
    .map(([k, v]) => `${k}=${quote(v)}`)
    .join(' ');
  const r = await execa(
    'ssh',
    [
      ...pair.sshd.clientOptions,
      '-p',
      String(pair.sshd.port),
      'root@127.0.0.1',
      `cd ${quote(pair.remote.project)} && env -i ${env} bash -c ${quote(command)}`,
    ],
    { reject: false, stdin: 'ignore' },
  );
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** Runs a shell command here, in this host's project with its environment. */
async function here(pair: TwoHosts, command: string): Promise<Run> {
  const r = await execa('bash', ['-c', command], {
    cwd: pair.local.project,
    env: pair.local.env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

const LOST_AFTER_SECS = 4;

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
const F = quote(FLOTILLA_COMMAND);

describe('one board across hosts on nats://', { timeout: 600_000 }, () => {
  it('a task added here is claimed on r1, and both hosts read the claim', async () => {
    const pair = await hosts.open();
    const added = await pair.local.flotilla(['task', 'add', 'parse the logs']);
    expect(added.stderr).toBe('');
    expect(added.stdout.trim()).toBe('t1');
    const claimed = await onR1(pair, `${F} task claim --next`);
    expect(claimed.stderr).toBe('');
    expect(claimed.stdout.trim()).toBe('t1');
    const shown = JSON.parse((await pair.local.flotilla(['task', 'show', 't1', '--json'])).stdout) as {
      status: string;
      claimed_by: string;
      title: string;
    };
    expect(shown).toMatchObject({ status: 'claimed', claimed_by: 'human', title: 'parse the logs' });
    // Nothing is left to claim here: the board is the fleet's, not each host's own.
    const none = await pair.local.flotilla(['task', 'claim', '--next']);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toMatch(/no claimable task on board 'fleet'/);
    const done = await onR1(pair, `${F} task done t1 'parsed'`);
    expect(done.stdout.trim()).toBe('t1 done');
    const listed = JSON.parse((await pair.local.flotilla(['task', 'list', '--json'])).stdout) as {
      counts: Record<string, number>;
    };
    expect(listed.counts).toEqual({ open: 0, claimed: 0, done: 1, failed: 0, cancelled: 0 });
    expect((await pair.local.flotilla(['task', 'wait', '--timeout', '5'])).exitCode).toBe(0);
    // status on either host counts the fleet's board.
    const st = JSON.parse((await onR1(pair, `${F} status --json`)).stdout) as {
      id: string;
      counts?: Record<string, number>;
    }[];
    expect(st.filter((e) => e.id.startsWith('board:'))).toEqual([
      expect.objectContaining({ id: 'board:fleet', counts: { open: 0, claimed: 0, done: 1, failed: 0, cancelled: 0 } }),
    ]);
  });

  it('20 claimants on two hosts race one task: exactly one wins, the others are told who holds it', async () => {
    const pair = await hosts.open();
    expect((await pair.local.flotilla(['task', 'add', 'the one task'])).stdout.trim()).toBe('t1');
    const runs = await Promise.all([
      ...Array.from({ length: 10 }, () => here(pair, `${F} task claim t1`)),
      ...Array.from({ length: 10 }, () => onR1(pair, `${F} task claim t1`)),
    ]);
    const won = runs.filter((r) => r.exitCode === 0);
    expect(won).toHaveLength(1);
    expect(won[0]!.stdout.trim()).toBe('t1');
    const lost = runs.filter((r) => r.exitCode !== 0);
    expect(lost).toHaveLength(19);
    for (const r of lost) expect(r.stderr).toMatch(/task t1 is already claimed by human/);
  });

  it('200 tasks drained over two hosts with claim --next: each done exactly once', async () => {
    const pair = await hosts.open();
    const TASKS = 200;
    // Added from both hosts at once, four shells each.
    const adders = (on: (p: TwoHosts, c: string) => Promise<Run>, host: string) =>
      Array.from({ length: 4 }, (_, k) =>
        on(pair, `for i in $(seq 1 ${TASKS / 8}); do ${F} task add "${host} ${k} $i" >/dev/null || echo FAIL; done`),
      );
    const adds = await Promise.all([...adders(here, 'here'), ...adders(onR1, 'r1')]);
    for (const a of adds) expect(a).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
    // Four workers per host: claim the next, mark it done, print its id, until nothing is left.
    const worker = `while id=$(${F} task claim --next 2>/dev/null); do ${F} task done "$id" ok >/dev/null && echo "$id"; done`;
    const runs = await Promise.all([
      ...Array.from({ length: 4 }, () => here(pair, worker)),
      ...Array.from({ length: 4 }, () => onR1(pair, worker)),
    ]);
    for (const r of runs) expect(r.exitCode).toBe(0);
    const ids = runs.flatMap((r) => r.stdout.split('\n').filter(Boolean));
    expect(ids).toHaveLength(TASKS);
    expect(new Set(ids).size).toBe(TASKS);
    // Both hosts did some of the work.
    expect(runs.slice(0, 4).some((r) => r.stdout.trim() !== '')).toBe(true);
    expect(runs.slice(4).some((r) => r.stdout.trim() !== '')).toBe(true);
    const listed = JSON.parse((await onR1(pair, `${F} task list --json`)).stdout) as { counts: Record<string, number> };
    expect(listed.counts).toEqual({ open: 0, claimed: 0, done: TASKS, failed: 0, cancelled: 0 });
  });
});

describe('a refused completion on nats://', { timeout: 600_000 }, () => {
  it("a person's done that the TaskCompleted hook refuses here reaches the claimant on r1 as mail", async () => {
    const pair = await hosts.open({ remoteDefinitions: { holder: '../hosts/board-holder.yaml' } });
    const { local, remote } = pair;
    const gate = 'echo "2 tests fail in parser.test.ts" >&2; exit 2';
    appendFileSync(local.layout.configFile, `hooks:\n  task_completed:\n    - command: ${JSON.stringify(gate)}\n`);
    trustProject(local.project, local.env);
    expect((await local.flotilla(['task', 'add', 'write the parser'])).stdout.trim()).toBe('t1');
    const spawned = await remote.spawnAgent(['--agent', 'holder', 'take the task']);
    expect(spawned.stderr).toBe('');
    const id = spawned.stdout.trim();
    await eventually(
      async () => (await local.flotilla(['task', 'show', 't1', '--json'])).stdout.includes(`"claimed_by": "${id}"`),
      120_000,
      'the agent on r1 to claim t1',
    );

    const done = await local.flotilla(['task', 'done', 't1', 'looks fine']);
    expect(done.exitCode).toBe(1);
    expect(done.stderr).toContain('the TaskCompleted hook kept task t1 open: 2 tests fail in parser.test.ts');
    // The agent's harness on r1 feeds its Maildir from the bus: the mail lands there.
    const box = maildir(remote.layout, id);
    const mail = () =>
      [box.new, box.cur]
        .flatMap((d) => (existsSync(d) ? readdirSync(d).map((n) => readFileSync(join(d, n), 'utf8')) : []))
        .filter((t) => t.includes('marked task t1'));
    await eventually(() => mail().length > 0, 60_000, 'the refusal mailed to the claimant on r1');
    expect(mail()).toHaveLength(1);
    expect(mail()[0]).toContain('2 tests fail in parser.test.ts');
    const shown = JSON.parse((await local.flotilla(['task', 'show', 't1', '--json'])).stdout) as {
      status: string;
      claimed_by: string;
    };
    expect(shown).toMatchObject({ status: 'claimed', claimed_by: id });
  });
});

/** A repository with one commit, cloned into both hosts' projects as `app/` (two clones of one repository). */
async function cloneBoth(pair: TwoHosts): Promise<void> {
  const origin = join(pair.local.project, '..', `origin-${process.pid}-${Date.now()}`);
  mkdirSync(join(origin, 'src'), { recursive: true });
  writeFileSync(join(origin, 'src', 'app.ts'), 'export const app = 1;\n');
  const git = (args: string[], cwd: string) =>
    execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd });
  await git(['init', '-q'], origin);
  await git(['add', '.'], origin);
  await git(['commit', '-qm', 'first'], origin);
  await git(['clone', '-q', origin, join(pair.local.project, 'app')], origin);
  await git(['clone', '-q', origin, join(pair.remote.project, 'app')], origin);
  rmSync(origin, { recursive: true, force: true });
}

describe('a lost host on nats://', { timeout: 600_000 }, () => {
  it('an agent on r1 holds a task and a lease in its clone; here both are refused naming it, and both are free once r1 counts as lost', async () => {
    const pair = await hosts.open({ remoteDefinitions: { holder: '../hosts/board-holder.yaml' } });
    const { local, remote } = pair;
    appendFileSync(local.layout.configFile, `    lost_after_secs: ${LOST_AFTER_SECS}\n`);
    trustProject(local.project, local.env);
    await cloneBoth(pair);
    expect((await local.flotilla(['task', 'add', 'change the app'])).stdout.trim()).toBe('t1');

    const spawned = await remote.spawnAgent(['--agent', 'holder', 'take the task']);
    expect(spawned.stderr).toBe('');
    const id = spawned.stdout.trim();
    const said = (file: string) => {
      try {
        return readFileSync(join(remote.project, file), 'utf8');
      } catch {
        return '';
      }
    };
    await eventually(
      () => said('claim.txt') !== '' && said('lease.txt') !== '',
      120_000,
      'the agent on r1 to claim and lease',
    );
    expect(said('claim.txt').trim()).toBe('t1');
    expect(said('lease.txt')).toMatch(/^leased to \S+ until your task ends: src\/app\.ts/);

    // Here, in another clone of the same repository: the agent on r1 holds both.
    const claim = await local.flotilla(['task', 'claim', 't1']);
    expect(claim.exitCode).toBe(1);
    expect(claim.stderr).toContain(`task t1 is already claimed by ${id}`);
    const lease = await local.flotilla(['lease', 'take', 'app/src/app.ts']);
    expect(lease.exitCode).toBe(1);
    expect(lease.stderr).toContain(`refused: src/app.ts is leased to agent ${id}`);
    // A commit here of the file it holds there is refused by the pre-commit check (run in the
    // clone, naming the fleet's root as a hook there would), naming it.
    const check = await here(
      pair,
      `cd app && echo edit >> src/app.ts && git add src/app.ts && ${F} --root ${quote(local.layout.root)} lease check --staged`,
    );
    expect(check.exitCode).toBe(1);
    expect(check.stderr).toContain(`${join(local.project, 'app', 'src', 'app.ts')} is leased to ${id} since`);
    // status here lists the lease of the agent on r1.
    expect((await local.flotilla(['status'])).stdout).toMatch(
      new RegExp(`\\n  ${id}  repository [0-9a-f]{12}/src/app\\.ts  since `),
    );
    // r1 beats while its agent lives.
    await eventually(
      async () => {
        const st = await local.flotilla(['status', '--json']);
        return (JSON.parse(st.stdout) as { id: string; lost?: boolean }[]).some(
          (x) => x.id === 'host:r1' && x.lost === false,
        );
      },
      60_000,
      'r1 beating',
    );

    // r1 dies: its tmux server frozen, the agent's harness SIGKILLed, the server killed: nothing of r1 beats.
    const pid = remote.record(id).pid!;
    const server = Number((await remote.tmux.tmux('display-message', '-p', '#{pid}')).trim());
    process.kill(server, 'SIGSTOP');
    process.kill(pid, 'SIGKILL');
    process.kill(server, 'SIGKILL');

    // Once r1 counts as lost, the task reads open and is claimed here; the lease is taken in this clone.
    const won = await eventually(
      async () => {
        const r = await local.flotilla(['task', 'claim', 't1']);
        return r.exitCode === 0 && r;
      },
      120_000,
      'the task free to claim here',
    );
    expect(won.stdout.trim()).toBe('t1');
    const shown = JSON.parse((await local.flotilla(['task', 'show', 't1', '--json'])).stdout) as {
      claimed_by: string;
      notes: { text: string }[];
    };
    expect(shown.claimed_by).toBe('human');
    expect(shown.notes.map((n) => n.text)).toEqual([
      expect.stringMatching(new RegExp(`^reopened: its claimant ${id} is on host r1, silent for \\d+ s \\(lost\\)$`)),
    ]);
    const taken = await local.flotilla(['lease', 'take', 'app/src/app.ts']);
    expect(taken.stderr).toBe('');
    expect(taken.stdout.trim()).toBe('leased to human until you release it: src/app.ts');
    const listed = await local.flotilla(['lease', 'list', '--json']);
    expect(
      (JSON.parse(listed.stdout) as { leases: { holder: string; path: string }[] }[]).flatMap((v) => v.leases),
    ).toEqual([expect.objectContaining({ holder: 'human', path: 'src/app.ts' })]);
  });
});
