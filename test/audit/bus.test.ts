import { execa } from 'execa';
import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeBuses } from '../../src/bus/open.js';
import { CLI } from '../helpers/cli.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type Run, type SpawnFleet } from '../spawn/helpers.js';

/**
 * The audit log across hosts on a `nats://` bus (docs/design.md §9, §18): two fleet roots on
 * one machine that call themselves `a` and `b` and share a real nats-server as one fleet. What
 * the person reading `flotilla audit` on a gets: b's lines, each once, with b's name — also the
 * lines b wrote while the server was down, and those after a torn line in b's file.
 */
type Line = Record<string, unknown> & { event: string; host: string; agent?: string; task?: string };

describe('the audit log on the bus (real nats-server, two hosts by name)', { timeout: 300_000 }, () => {
  let server: NatsServer;
  const fleets: SpawnFleet[] = [];
  let fleetNo = 0;
  beforeAll(async () => {
    server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server.kill();
  });
  afterEach(async () => {
    await closeBuses();
    for (const f of fleets.splice(0)) await f.close();
  });

  /** Hosts a and b of one fleet (a fresh fleet name per test: tests never read each other's lines). */
  const pair = (): { a: SpawnFleet; b: SpawnFleet } => {
    const name = `audit${process.pid}x${++fleetNo}`;
    const host = (h: string) => {
      const f = spawnFleet({
        config: `fleet:\n  bus: ${server.url}\n  name: ${name}\n  host: ${h}\n`,
        definitions: { worker: 'worker.yaml' },
      });
      fleets.push(f);
      return f;
    };
    return { a: host('a'), b: host('b') };
  };
  const jsonLines = (r: Run): Line[] => {
    expect(r.exitCode, r.stderr).toBe(0);
    return r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
  };
  const auditOn = async (f: SpawnFleet, args: string[] = []) =>
    jsonLines(await f.flotilla(['audit', '--json', ...args]));
  const count = (lines: Line[], p: (l: Line) => boolean) => lines.filter(p).length;

  it("an agent's spawn, work and completion on b appear in a's audit once each, with b's name; --host filters", async () => {
    const { a, b } = pair();
    // Something of a's own, so a's view holds both hosts.
    expect((await a.flotilla(['task', 'add', 'a-side task', '--id', 'ta1'])).exitCode).toBe(0);
    const spawned = await b.spawnAgent(['--oneshot', '--agent', 'worker', '--id', 'far-once', 'work']);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    // b's harness ships its own last lines as it ends: nobody on b looks.
    const seen = await eventually(
      async () => {
        const lines = await auditOn(a);
        return lines.some((l) => l.event === 'agent_end' && l.agent === 'far-once') && lines;
      },
      120_000,
      "b's agent_end in a's flotilla audit",
    );
    const far = seen.filter((l) => l.agent === 'far-once');
    for (const event of ['spawn', 'agent_start', 'tool_call', 'completion', 'agent_end']) {
      expect(
        count(far, (l) => l.event === event),
        `${event} once`,
      ).toBe(1);
    }
    expect(new Set(far.map((l) => l.host))).toEqual(new Set(['b']));
    // The person on a sees what b's own file holds of that agent, line for line.
    const inB = readFileSync(b.layout.auditFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((t) => JSON.parse(t) as Line)
      .filter((l) => l.agent === 'far-once');
    expect(far.map(({ host: _h, ...rest }) => rest)).toEqual(inB);
    // a's own line, with a's name; merged by time.
    expect(seen.find((l) => l.event === 'task_created' && l.task === 'ta1')).toMatchObject({ host: 'a' });
    const times = seen.map((l) => String(l.ts));
    expect(times).toEqual([...times].sort());

    // --host: one host's lines alone; the other filters still apply.
    const onlyB = await auditOn(a, ['--host', 'b']);
    expect(onlyB.length).toBeGreaterThan(0);
    expect(onlyB.every((l) => l.host === 'b')).toBe(true);
    expect(count(onlyB, (l) => l.event === 'agent_end' && l.agent === 'far-once')).toBe(1);
    expect(jsonLines(await a.flotilla(['audit', '--json', '--host', 'a'])).map((l) => [l.host, l.event])).toEqual([
      ['a', 'task_created'],
    ]);
    expect((await auditOn(a, ['--host', 'b', '--event', 'completion'])).map((l) => [l.host, l.event, l.agent])).toEqual(
      [['b', 'completion', 'far-once']],
    );
    expect(await auditOn(a, ['--host', 'nowhere'])).toEqual([]);
    // Text: the host after the time.
    const text = await a.flotilla(['audit', '--event', 'agent_end']);
    expect(text.stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} b +agent_end +far-once /m);
  });

  it('lines b writes while nats-server is stopped reach a after it restarts: nothing lost, nothing twice', async () => {
    const { a, b } = pair();
    // A live agent on b: its harness's heartbeat is what ships b's lines.
    expect((await b.spawnAgent(['--agent', 'worker', '--id', 'far-stays', 'work'])).exitCode).toBe(0);
    await eventually(
      async () => (await auditOn(a)).some((l) => l.event === 'completion' && l.agent === 'far-stays'),
      120_000,
      "b's first completion in a's audit",
    );
    const before = await b.flotilla(['task', 'add', 'before the outage', '--id', 'pre']);
    expect(before.exitCode, before.stderr).toBe(0);
    await eventually(
      async () => (await auditOn(a)).some((l) => l.task === 'pre'),
      60_000,
      "b's task line before the outage, in a's audit",
    );

    expect((await a.flotilla(['task', 'add', 'on a', '--id', 'mine'])).exitCode).toBe(0);
    const ids = Array.from({ length: 12 }, (_, i) => `down${i}`);
    await server.stop();
    try {
      // The board is the bus's now (design §15), so b writes lines of its own host alone: schedules.
      for (const id of ids) {
        const added = await b.flotilla(['schedule', 'add', id, '0 3 * * *', `while the bus is down ${id}`]);
        expect(added.exitCode, added.stderr).toBe(0);
      }
      // a cannot read b now: it shows its own lines and says why the others are missing, exit 0.
      const partial = await a.flotilla(['audit', '--json']);
      expect(partial.exitCode).toBe(0);
      expect(partial.stderr).toMatch(
        /other hosts' audit lines could not be read: .* — showing this host's \(a\) alone/,
      );
      expect(
        partial.stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Line)
          .map((l) => [l.host, l.task]),
      ).toEqual([['a', 'mine']]);
    } finally {
      // Back for the rest of the test and the next tests, whatever failed.
      await server.start();
    }

    const after = await eventually(
      async () => {
        const lines = await auditOn(a, ['--host', 'b']);
        return ids.every((id) => lines.some((l) => l.event === 'schedule_added' && l.schedule === id)) && lines;
      },
      120_000,
      "b's lines from the outage in a's audit",
    );
    for (const id of ids)
      expect(
        count(after, (l) => l.event === 'schedule_added' && l.schedule === id),
        `${id} once`,
      ).toBe(1);
    expect(
      count(after, (l) => l.task === 'pre' && l.event === 'task_created'),
      'pre once',
    ).toBe(1);
    // Lines sent before the outage were not sent again either.
    const all = await auditOn(a, ['--host', 'b']);
    expect(count(all, (l) => l.event === 'spawn' && l.agent === 'far-stays')).toBe(1);
    expect(all.length).toBe(new Set(all.map((l) => JSON.stringify(l))).size);
  });

  it("a torn and a foreign line in b's file do not stop the lines after them from reaching a", async () => {
    const { a, b } = pair();
    expect((await b.flotilla(['task', 'add', 'first', '--id', 'first'])).exitCode).toBe(0);
    // A line nobody can read, then a write torn before its LF: the next line lands on its tail.
    appendFileSync(b.layout.auditFile, 'not an audit line\n{"ts":"2026-11-26T10:00:00.000Z","event":"task_cre');
    for (const id of ['swallowed', 'second', 'third'])
      expect((await b.flotilla(['task', 'add', id, '--id', id])).exitCode).toBe(0);
    // A look on b (a process holding a connection anyway) ships b's lines.
    expect((await b.flotilla(['status'])).exitCode).toBe(0);
    const fromB = await eventually(
      async () => {
        const lines = await auditOn(a, ['--host', 'b']);
        return lines.some((l) => l.task === 'third') && lines;
      },
      60_000,
      "b's lines after the torn one, in a's audit",
    );
    expect(fromB.filter((l) => l.event === 'task_created').map((l) => l.task)).toEqual(['first', 'second', 'third']);
    // Exactly what b's own audit shows: the line written onto the torn tail is lost there too.
    const onB = (await auditOn(b)).filter((l) => l.event === 'task_created');
    expect(onB.map((l) => [l.host, l.task])).toEqual([
      ['b', 'first'],
      ['b', 'second'],
      ['b', 'third'],
    ]);
  });

  it("a line on b's subject that claims to be a's shows as b's: the host is the subject's, never the line's", async () => {
    const { a, b } = pair();
    expect((await a.flotilla(['task', 'add', 'mine', '--id', 'mine'])).exitCode).toBe(0);
    // A process on b writes a line that names host a and an agent of a's.
    appendFileSync(
      b.layout.auditFile,
      `${JSON.stringify({ ts: new Date().toISOString(), host: 'a', event: 'task_created', task: 'forged', agent: 'a-lead' })}\n`,
    );
    expect((await b.flotilla(['status'])).exitCode).toBe(0);
    const seen = await eventually(
      async () => {
        const lines = await auditOn(a);
        return lines.some((l) => l.task === 'forged') && lines;
      },
      60_000,
      "b's forged line in a's audit",
    );
    expect(seen.filter((l) => l.task === 'forged').map((l) => l.host)).toEqual(['b']);
    // a's own view of its host holds only what a wrote.
    expect((await auditOn(a, ['--host', 'a'])).map((l) => l.task)).toEqual(['mine']);
    expect((await a.flotilla(['audit', '--host', 'b', '--event', 'task_created'])).stdout).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} b +task_created /m,
    );
  });

  it("--follow on a prints b's new lines as they reach the bus, and a's own as they are written", async () => {
    const { a, b } = pair();
    expect((await b.flotilla(['task', 'add', 'old', '--id', 'old'])).exitCode).toBe(0);
    expect((await b.flotilla(['status'])).exitCode).toBe(0);
    const follow = execa(process.execPath, [CLI, 'audit', '--follow', '--json', '--event', 'task_created'], {
      cwd: a.project,
      env: a.env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    let out = '';
    follow.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const tasks = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line)
        .map((l) => `${l.host}:${String(l.task)}`);
    try {
      await eventually(() => tasks().includes('b:old'), 60_000, "b's earlier line in a's follow");
      expect((await b.flotilla(['task', 'add', 'new', '--id', 'new'])).exitCode).toBe(0);
      expect((await b.flotilla(['status'])).exitCode).toBe(0);
      expect((await a.flotilla(['task', 'add', 'mine', '--id', 'mine'])).exitCode).toBe(0);
      await eventually(
        () => tasks().includes('b:new') && tasks().includes('a:mine'),
        60_000,
        "b's new line and a's own in a's follow",
      );
      expect(tasks().filter((t) => t === 'b:old' || t === 'b:new')).toEqual(['b:old', 'b:new']);
    } finally {
      follow.kill('SIGKILL');
      await follow;
    }
  });

  it('a maildir fleet prints its lines as before: no host field, no host column', async () => {
    const f = spawnFleet({});
    fleets.push(f);
    expect((await f.flotilla(['task', 'add', 'here', '--id', 'h1'])).exitCode).toBe(0);
    const lines = await auditOn(f);
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toHaveProperty('host');
    expect(lines[0]).toMatchObject({ event: 'task_created', task: 'h1' });
    const text = await f.flotilla(['audit']);
    expect(text.stdout).toMatch(/^\d\d:\d\d:\d\d\.\d{3} task_created +/);
  });
});
