import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

const fleets: SpawnFleet[] = [];
let server: NatsServer | undefined;
let nc: NatsConnection | undefined;
afterEach(async () => {
  await nc?.close();
  for (const f of fleets.splice(0)) await f.close();
  await server?.kill();
  nc = undefined;
  server = undefined;
});

/** The accounts of docs/scale-out.md "Two fleets on one server": one per fleet, each with its own JetStream. */
const ACCOUNTS = {
  FLEET_ALPHA: { user: 'alpha', password: 'alpha-pass' },
  FLEET_BETA: { user: 'beta', password: 'beta-pass' },
};
const credsOf = (u: { user: string; password: string }) => ({
  FLOTILLA_NATS_USER: u.user,
  FLOTILLA_NATS_PASSWORD: u.password,
});

/**
 * Two fleets on one nats-server, each in its own account (docs/scale-out.md): each works, and
 * one fleet's credentials neither read nor write the other's subjects, streams or buckets.
 */
describe('two fleets on one server, one account each (real nats-server)', () => {
  it("each fleet works; with one fleet's credentials the other's mail, streams and records are out of reach", async () => {
    server = await natsServer({ accounts: ACCOUNTS });
    const fleet = (name: string) => {
      const f = spawnFleet({ definitions: { worker: 'worker.yaml' } });
      fleets.push(f);
      mkdirSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla'), { recursive: true });
      writeFileSync(
        join(f.env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml'),
        `fleet:\n  bus: ${server!.url}\n  name: ${name}\n`,
      );
      return f;
    };
    const alpha = fleet('alpha');
    const beta = fleet('beta');
    const A = credsOf(ACCOUNTS.FLEET_ALPHA);
    const B = credsOf(ACCOUNTS.FLEET_BETA);

    // Alpha's own client, connected as alpha, sees every fleet subject and record write of its account from here on.
    nc = await connect({ servers: `127.0.0.1:${server.port}`, user: 'alpha', pass: 'alpha-pass' });
    const seen: string[] = [];
    const subs = [nc.subscribe('flotilla.>'), nc.subscribe('$KV.>')];
    for (const sub of subs)
      void (async () => {
        for await (const m of sub) seen.push(m.subject);
      })();
    await nc.flush();

    // Each fleet spawns and its completion reaches its person over the bus.
    for (const [f, creds] of [
      [alpha, A],
      [beta, B],
    ] as const) {
      const s = await f.spawnAgent(['--agent', 'worker', '--id', 'w', 'go'], creds);
      expect(s.exitCode, s.stderr).toBe(0);
      await eventually(
        async () => {
          const r = await f.flotilla(['inbox', 'human', '--all', '--json'], creds);
          return (JSON.parse(r.stdout || '[]') as { kind: string; from: string }[]).some(
            (m) => m.kind === 'completion' && m.from === 'w',
          );
        },
        60_000,
        'the completion over the bus',
      );
    }
    // Beta sends mail, acknowledged by its stream; then alpha's client marks the end of what it could have seen.
    const sent = await beta.flotilla(['send', 'w', 'for beta only'], B);
    expect(sent.exitCode, sent.stderr).toBe(0);
    nc.publish('flotilla.marker');
    await eventually(() => seen.includes('flotilla.marker'), 30_000, "alpha's own marker");
    for (const sub of subs) sub.unsubscribe();

    // Read: alpha's client saw its own fleet's traffic and none of beta's.
    expect(seen.some((s) => s.startsWith('flotilla.alpha.') || s.startsWith('$KV.FLOTILLA_alpha_'))).toBe(true);
    expect(seen.filter((s) => s.includes('beta'))).toEqual([]);
    const jsm = await jetstreamManager(nc);
    const streams: string[] = [];
    for await (const name of jsm.streams.names()) streams.push(name);
    expect(streams).toContain('FLOTILLA_alpha_MAIL');
    expect(streams.filter((s) => s.includes('beta'))).toEqual([]);
    await expect(jsm.streams.info('FLOTILLA_beta_MAIL')).rejects.toThrow(/stream not found/);
    await expect(
      jsm.streams.getMessage('KV_FLOTILLA_beta_RECORDS', { last_by_subj: '$KV.FLOTILLA_beta_RECORDS.w' }),
    ).rejects.toThrow(/stream not found/);

    // Write: mail published as alpha to beta's agent's subject is stored by no stream of alpha's
    // account (no stream answers: the client says "jetstream is not enabled" for that), and
    // never reaches beta's.
    await expect(jetstream(nc).publish('flotilla.beta.mail.w', 'forged')).rejects.toThrow(
      /no responders|no stream|jetstream is not enabled/i,
    );
    const inbox = await beta.flotilla(['inbox', 'w', '--all', '--json'], B);
    const bodies = (JSON.parse(inbox.stdout || '[]') as { from: string }[]).map((m) => m.from);
    expect(bodies).toEqual(['human']);
  }, 240_000);
});
