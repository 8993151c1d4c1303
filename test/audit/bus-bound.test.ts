import { jetstreamManager, RetentionPolicy, StorageType, type StreamInfo } from '@nats-io/jetstream';
import { connect, nanos } from '@nats-io/transport-node';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeBuses } from '../../src/bus/open.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type Run, type SpawnFleet } from '../spawn/helpers.js';

/**
 * The audit stream's bound (`fleet.audit_max_age_secs`, docs/scale-out.md): lines older than
 * it leave the stream, set on a stream made before there was a bound as on a new one, and
 * `flotilla audit --host` reads what is left; each host's own file keeps every line.
 */
type Line = Record<string, unknown> & { event: string; host: string; task?: string };

describe('the audit stream is bounded by age (real nats-server, two hosts by name)', { timeout: 300_000 }, () => {
  let server: NatsServer;
  const fleets: SpawnFleet[] = [];
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

  const host = (name: string, h: string, extra = ''): SpawnFleet => {
    const f = spawnFleet({ config: `fleet:\n  bus: ${server.url}\n  name: ${name}\n  host: ${h}\n${extra}` });
    fleets.push(f);
    return f;
  };
  const setAge = (f: SpawnFleet, secs: number) =>
    writeFileSync(
      f.layout.configFile,
      readFileSync(f.layout.configFile, 'utf8').replace(/audit_max_age_secs: \d+/, `audit_max_age_secs: ${secs}`),
    );
  const tasks = (r: Run): string[] => {
    expect(r.exitCode, r.stderr).toBe(0);
    return r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line)
      .filter((l) => l.event === 'task_created')
      .map((l) => `${l.host}:${String(l.task)}`);
  };
  const stream = async (name: string, make?: boolean): Promise<StreamInfo> => {
    const nc = await connect({ servers: server.url });
    try {
      const jsm = await jetstreamManager(nc);
      // As Flotilla made it before the bound: limits retention, no age.
      if (make)
        await jsm.streams.add({
          name,
          subjects: [`flotilla.${name.slice('FLOTILLA_'.length, -'_AUDIT'.length)}.audit.>`],
          storage: StorageType.File,
          retention: RetentionPolicy.Limits,
          duplicate_window: nanos(3600_000),
        });
      return await jsm.streams.info(name);
    } finally {
      await nc.close();
    }
  };

  it("a stream made without a bound takes the configured age, drops b's older lines, and a's audit --host b reads the ones after", async () => {
    const made = await stream('FLOTILLA_aged_AUDIT', true);
    expect(made.config.max_age).toBe(0);
    const a = host('aged', 'a', '  audit_max_age_secs: 1\n');
    const b = host('aged', 'b', '  audit_max_age_secs: 1\n');
    expect((await b.flotilla(['task', 'add', 'first', '--id', 'first'])).exitCode).toBe(0);
    // b's status ships its lines, opening the stream with b's setting (looked at again should one ship time out on a
    // loaded machine).
    const bounded = await eventually(
      async () => {
        expect((await b.flotilla(['status'])).exitCode).toBe(0);
        const info = await stream('FLOTILLA_aged_AUDIT');
        return info.state.last_seq > 0 && info;
      },
      60_000,
      "b's lines on the stream",
    );
    expect(bounded.config.max_age).toBe(nanos(1000));
    await eventually(
      async () => (await stream('FLOTILLA_aged_AUDIT')).state.first_seq > 1,
      60_000,
      "b's first line aged out of the stream",
    );

    // A longer age on both hosts (it applies as the stream is next opened): what b writes now stays.
    setAge(a, 3600);
    setAge(b, 3600);
    expect((await b.flotilla(['task', 'add', 'second', '--id', 'second'])).exitCode).toBe(0);
    const fromA = await eventually(
      async () => {
        expect((await b.flotilla(['status'])).exitCode).toBe(0);
        const seen = tasks(await a.flotilla(['audit', '--json', '--host', 'b']));
        return seen.length > 0 && seen;
      },
      60_000,
      "b's second line in a's audit --host b",
    );
    expect((await stream('FLOTILLA_aged_AUDIT')).config.max_age).toBe(nanos(3600_000));
    expect(fromA).toEqual(['b:second']);
    // b's own file keeps both.
    expect(tasks(await b.flotilla(['audit', '--json', '--host', 'b']))).toEqual(['b:first', 'b:second']);
  });

  it('a new stream gets 30 days by default; 0 keeps every line', async () => {
    const a = host('dflt', 'a');
    // A line to ship: the stream is made with the first line a host sends, not by a look that owes none.
    expect((await a.flotilla(['task', 'add', 'first', '--id', 'first'])).exitCode).toBe(0);
    const made = await eventually(
      async () => {
        expect((await a.flotilla(['status'])).exitCode).toBe(0);
        return await stream('FLOTILLA_dflt_AUDIT');
      },
      60_000,
      'the audit stream made by a status',
    );
    expect(made.config.max_age).toBe(nanos(30 * 86_400_000));
    const b = host('dflt', 'b', '  audit_max_age_secs: 0\n');
    expect((await b.flotilla(['task', 'add', 'second', '--id', 'second'])).exitCode).toBe(0);
    const unbounded = await eventually(
      async () => {
        expect((await b.flotilla(['status'])).exitCode).toBe(0);
        const info = await stream('FLOTILLA_dflt_AUDIT');
        return info.config.max_age === 0 && info;
      },
      60_000,
      "b's setting on the stream",
    );
    expect(unbounded.config.duplicate_window).toBe(nanos(3600_000));
  });
});
