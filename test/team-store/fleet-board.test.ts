import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { FLOTILLA_COMMAND } from '../helpers/sshd.js';
import { hostsOnBus, type TwoHosts } from '../hosts/helpers.js';

/**
 * One board for the whole fleet on a `nats://` bus (docs/design.md §15, §18): two hosts — this
 * machine's fleet and `r1`, reached only through a real sshd — on one real nats-server. A
 * command "on r1" runs there over ssh, in r1's project, with r1's HOME and fleet root.
 */
const hosts = hostsOnBus();

interface Run { exitCode: number; stdout: string; stderr: string }

/** Runs a shell command on r1 over ssh, in its project with its environment. */
async function onR1(pair: TwoHosts, command: string): Promise<Run> {
  const env = Object.entries(pair.remote.env).map(([k, v]) => `${k}=${quote(v)}`).join(' ');
  const r = await execa('ssh', [...pair.sshd.clientOptions, '-p', String(pair.sshd.port), 'root@127.0.0.1', `cd ${quote(pair.remote.project)} && env -i ${env} bash -c ${quote(command)}`], { reject: false, stdin: 'ignore' });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** Runs a shell command here, in this host's project with its environment. */
async function here(pair: TwoHosts, command: string): Promise<Run> {
  const r = await execa('bash', ['-c', command], { cwd: pair.local.project, env: pair.local.env, extendEnv: false, reject: false, stdin: 'ignore' });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

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
    const shown = JSON.parse((await pair.local.flotilla(['task', 'show', 't1', '--json'])).stdout) as { status: string; claimed_by: string; title: string };
    expect(shown).toMatchObject({ status: 'claimed', claimed_by: 'human', title: 'parse the logs' });
    // Nothing is left to claim here: the board is the fleet's, not each host's own.
    const none = await pair.local.flotilla(['task', 'claim', '--next']);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toMatch(/no claimable task on board 'fleet'/);
    const done = await onR1(pair, `${F} task done t1 'parsed'`);
    expect(done.stdout.trim()).toBe('t1 done');
    const listed = JSON.parse((await pair.local.flotilla(['task', 'list', '--json'])).stdout) as { counts: Record<string, number> };
    expect(listed.counts).toEqual({ open: 0, claimed: 0, done: 1, failed: 0, cancelled: 0 });
    // The task never reached this host's fleet root: the board is on the bus.
    expect((await pair.local.flotilla(['task', 'wait', '--timeout', '5'])).exitCode).toBe(0);
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
    const adders = (on: (p: TwoHosts, c: string) => Promise<Run>, host: string) => Array.from({ length: 4 }, (_, k) =>
      on(pair, `for i in $(seq 1 ${TASKS / 8}); do ${F} task add "${host} ${k} $i" >/dev/null || echo FAIL; done`));
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
