import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUSES, natsServer, personBus, type BusKind, type NatsServer } from '../helpers/nats.js';
import { readAudit } from '../../src/audit/read.js';
import { eventually } from '../helpers/tmux.js';
import { isAlive, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

/**
 * Completions from `from` in `owner`'s inbox as a person reads them (`flotilla inbox OWNER
 * --all --json`): on nats:// that brings in what waits on the bus for an owner no harness
 * feeds any more (an ended parent, the person), as §18 says.
 */
async function completionsFrom(f: SpawnFleet, owner: string, from: string): Promise<{ status: string }[]> {
  const r = await f.flotilla(['inbox', owner, '--all', '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { kind: string; from: string; status: string }[]).filter(
    (m) => m.kind === 'completion' && m.from === from,
  );
}

/**
 * The statuses of the completions from `from` in `owner`'s inbox once one is there: on nats:// a
 * completion sent as its parent's harness ended waits on the bus until a read brings it in, and
 * a read on a loaded machine can end before the bus answers (the next one brings it).
 */
async function statusesOnce(f: SpawnFleet, owner: string, from: string): Promise<string[]> {
  return eventually(
    async () => {
      const got = (await completionsFrom(f, owner, from)).map((m) => m.status);
      return got.length > 0 ? got : undefined;
    },
    30_000,
    `${from}'s completion in ${owner}'s inbox`,
  ).catch(() => []);
}

/** What the audit trail says of `id`'s completion, for a failure's message. */
function auditOf(f: SpawnFleet, id: string): string {
  const events = ['completion', 'completion_withheld', 'message_sent', 'cancel', 'agent_end'];
  return readAudit(f.layout)
    .lines.filter((l) => (l.agent === id || l.from === id) && events.includes(String(l.event)))
    .map((l) => JSON.stringify(l))
    .join('\n');
}

// Every exit path by cancel holds on every bus (docs/design.md §5.8, §18): on nats:// the
// completions travel the fleet's stream on a real nats-server started here.
describe.each(BUSES)('flotilla cancel (§5.8) on the $bus bus', ({ bus: kind }: { bus: BusKind }) => {
  let server: NatsServer | undefined;
  beforeAll(async () => {
    if (kind === 'nats') server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server?.kill();
  });
  const fleet = (opts: Parameters<typeof spawnFleet>[0]) => {
    const made = spawnFleet(opts);
    personBus(made.env.XDG_CONFIG_HOME!, kind, server);
    return made;
  };

  it('cancels a parent and its two foreground children: three cancelled, three completions, no process left; a background child survives', async () => {
    f = fleet({ definitions: { lead: 'lead-cancel.yaml', sleeper: 'sleeper.yaml' } });
    expect((await f.spawnAgent(['--agent', 'lead', '--id', 'lead-c', 'spawn and wait'])).exitCode).toBe(0);
    const ids = ['fg-one', 'fg-two', 'bg-one'];
    const all = await eventually(
      () => {
        const recs = ids.map((id) => f!.records().find((r) => r.id === id));
        return (
          recs.every((r) => r && r.status === 'working' && r.lastLine.startsWith('$ sleep')) &&
          f!.record('lead-c').lastLine === 'wait_for_agents' &&
          recs
        );
      },
      20_000,
      'three sleepers working and the lead waiting',
    );
    const pids = Object.fromEntries([...all, f.record('lead-c')].map((r) => [r!.id, r!.pid!]));
    expect(f.record('bg-one').background).toBe(true);
    expect(f.record('bg-one').parentId).toBe('lead-c');

    const r = await f.flotilla(['cancel', 'lead-c']);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('cancelled lead-c, fg-one, fg-two');
    for (const id of ['lead-c', 'fg-one', 'fg-two']) {
      expect(f.record(id).status).toBe('cancelled');
      expect(isAlive(pids[id]!)).toBe(false);
    }
    // No process of the cancelled agents is left: harnesses, shells, sleeps (found by their environment).
    // (`flotilla reap` run by the pane-died hooks of the closed panes is not the agents' own.)
    const left = fleetProcesses(f.layout.root).filter((p) => !p.cmd.includes(' reap --pane '));
    // Except the pid namespace of the shell command that started the background child: it
    // hosts that child, so it lives on with it (docs/security.md, Lineage).
    // Namespace and parent are read with the listing: the init's `sleep 1` can exit in between.
    const hostNs = readlinkSync(`/proc/${pids['bg-one']!}/ns/pid`);
    const hosting = (p: FleetProcess): boolean =>
      p.ns === hostNs || left.some((q) => q.ns === hostNs && q.ppid === p.pid);
    expect(left.filter((p) => ['lead-c', 'fg-one', 'fg-two'].includes(p.agent) && !hosting(p))).toEqual([]);
    expect(left.filter((p) => p.agent === 'bg-one').length).toBeGreaterThanOrEqual(2);
    for (const [owner, from] of [
      ['human', 'lead-c'],
      ['lead-c', 'fg-one'],
      ['lead-c', 'fg-two'],
    ] as const)
      expect(await statusesOnce(f, owner, from), auditOf(f, from)).toEqual(['cancelled']);
    // The background child is untouched…
    expect(isAlive(pids['bg-one']!)).toBe(true);
    expect(f.record('bg-one').status).toBe('working');
    // …until the whole tree is cancelled.
    const tree = await f.flotilla(['cancel', '--tree', 'lead-c']);
    expect(tree.stdout).toBe('cancelled bg-one');
    expect(isAlive(pids['bg-one']!)).toBe(false);
    expect(f.record('bg-one').status).toBe('cancelled');
    expect((await completionsFrom(f, 'lead-c', 'bg-one')).map((m) => m.status)).toEqual(['cancelled']);
    // Looking again brings nothing new: one completion each, not one per look.
    expect(await completionsFrom(f, 'lead-c', 'fg-one')).toHaveLength(1);
    expect(await completionsFrom(f, 'human', 'lead-c')).toHaveLength(1);
  });

  it('an agent cancelled while it starts, before its task has run, still sends its task one completion (cancelled)', async () => {
    // The start hook holds the harness between its start and its first model call: the cancel lands there.
    const began = join(tmpdir(), `flotilla-cancel-start-${process.pid}-${Date.now()}`);
    f = fleet({
      definitions: { sleeper: 'sleeper.yaml' },
      config: `hooks:\n  start:\n    - command: "touch ${began}; sleep 3"\n`,
    });
    expect((await f.spawnAgent(['--agent', 'sleeper', '--id', 'early', 'sleep'])).exitCode).toBe(0);
    await eventually(() => existsSync(began), 60_000, 'the start hook running');
    const r = await f.flotilla(['cancel', 'early']);
    expect(r.exitCode).toBe(0);
    await eventually(() => f!.record('early').status === 'cancelled', 60_000, 'cancelled');
    await eventually(async () => (await completionsFrom(f!, 'human', 'early')).length > 0, 60_000, 'its completion');
    expect((await completionsFrom(f, 'human', 'early')).map((m) => m.status)).toEqual(['cancelled']);
    rmSync(began, { force: true });
  });
});

describe('flotilla cancel (§5.8)', () => {
  it('an ambiguous prefix lists the candidates; an ended agent is reported as such', async () => {
    f = spawnFleet();
    const { fixture } = await import('../spawn/helpers.js');
    for (const id of ['dup-one', 'dup-two'])
      expect(
        (await f.spawnAgent(['--wait', '--oneshot', '--id', id, '--model', `script:${fixture('worker.yaml')}`, 'x']))
          .exitCode,
      ).toBe(0);
    const amb = await f.flotilla(['cancel', 'dup']);
    expect(amb.exitCode).toBe(1);
    expect(amb.stderr).toMatch(/^flotilla: 'dup' matches 2 agents: dup-one, dup-two — give more characters/);
    const done = await f.flotilla(['cancel', 'dup-one']);
    expect(done.stdout).toBe('dup-one had already ended (completed)');
  });
});

interface FleetProcess {
  pid: number;
  ppid: number;
  ns: string;
  agent: string;
  cmd: string;
}

/** Live processes whose environment names this fleet root, with the agent id they run for. */
function fleetProcesses(root: string): FleetProcess[] {
  const out: FleetProcess[] = [];
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (/^\S+ \(.*\) [ZX]/.test(stat)) continue;
      const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (!env.includes(`FLOTILLA_ROOT=${root}`)) continue;
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const ns = readlinkSync(`/proc/${name}/ns/pid`);
      // The fields after the command's name, which may itself hold spaces or parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.push({
        pid: Number(name),
        ppid,
        ns,
        cmd,
        agent: env.find((e) => e.startsWith('FLOTILLA_AGENT_ID='))?.slice('FLOTILLA_AGENT_ID='.length) ?? '',
      });
    } catch {
      // Gone, or not ours to read.
    }
  }
  return out;
}
