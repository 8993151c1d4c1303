import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { natsServer, type NatsAuth, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

let f: SpawnFleet | undefined;
let server: NatsServer | undefined;
afterEach(async () => {
  await f?.close();
  await server?.kill();
  f = undefined;
  server = undefined;
});

/**
 * The bus with authentication and TLS (docs/scale-out.md, docs/security-fleet.md "Bus
 * credentials"): a real nats-server that refuses clients without them; the person's shell
 * holds the credentials in the variables `fleet.nats` names, and the CA (for tls://) in
 * `fleet.nats.ca_file`. A spawn, a send and status all work through it.
 */
const MODES: { name: string; auth: NatsAuth; creds: Record<string, string> }[] = [
  { name: 'a token', auth: { token: 's3cret-token' }, creds: { FLOTILLA_NATS_TOKEN: 's3cret-token' } },
  {
    name: 'a user and password',
    auth: { user: { user: 'fleet', password: 'pa55word' } },
    creds: { FLOTILLA_NATS_USER: 'fleet', FLOTILLA_NATS_PASSWORD: 'pa55word' },
  },
  {
    name: 'TLS (a throwaway CA) and a token',
    auth: { tls: true, token: 'tls-token' },
    creds: { FLOTILLA_NATS_TOKEN: 'tls-token' },
  },
];

describe.each(MODES)('a nats bus with $name (real nats-server)', ({ auth, creds }) => {
  it('spawn, send and status work with the credentials; without them the bus refuses', async () => {
    server = await natsServer(auth);
    f = spawnFleet({ definitions: { worker: 'worker.yaml' } });
    mkdirSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla'), { recursive: true });
    writeFileSync(
      join(f.env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml'),
      `fleet:\n  bus: ${server.url}\n${server.caFile ? `  nats:\n    ca_file: ${server.caFile}\n` : ''}`,
    );

    // Without the credentials nothing reaches the bus: the server refuses the connection.
    const refused = await f.flotilla(['status']);
    expect(refused.stdout).toMatch(/Bus: UNREACHABLE — /);

    const s = await f.spawnAgent(['--agent', 'worker', '--id', 'w-auth', 'go'], creds);
    expect(s.exitCode, s.stderr).toBe(0);
    // Its completion travels the bus to the person.
    const done = await eventually(
      async () => {
        const r = await f!.flotilla(['inbox', 'human', '--all', '--json'], creds);
        const mail = JSON.parse(r.stdout || '[]') as { kind: string; from: string; status: string }[];
        return mail.find((m) => m.kind === 'completion' && m.from === 'w-auth');
      },
      60_000,
      'the completion over the bus',
    );
    expect(done.status).toBe('completed');

    const sent = await f.flotilla(['send', 'w-auth', 'hello over the authenticated bus'], creds);
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(sent.stderr).toBe('');
    // The agent reads it and answers (its script says "noted" to mail).
    await eventually(
      async () =>
        (await f!.flotilla(['transcript', 'w-auth'], creds)).stdout.includes('hello over the authenticated bus'),
      60_000,
      "the message in the agent's transcript",
    );

    const st = await f.flotilla(['status'], creds);
    expect(st.exitCode, st.stderr).toBe(0);
    expect(st.stdout).toMatch(new RegExp(`Bus: reachable — ${server.url.replace(/[.:/]/g, '\\$&')} \\(nats-server `));
    expect(st.stdout).toContain('w-auth');
  }, 180_000);
});

describe('a tls:// bus whose CA a vendor shim kept aside from Node (src/extra-ca-certs.ts)', () => {
  it('is reached with the CA from FLOTILLA_EXTRA_CA_CERTS and no ca_file; without it the certificate is refused', async () => {
    server = await natsServer({ tls: true, token: 'tls-token' });
    f = spawnFleet();
    mkdirSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla'), { recursive: true });
    writeFileSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml'), `fleet:\n  bus: ${server.url}\n`);
    const token = { FLOTILLA_NATS_TOKEN: 'tls-token' };
    expect((await f.flotilla(['status'], token)).stdout).toMatch(/Bus: UNREACHABLE — /);
    const st = await f.flotilla(['status'], { ...token, FLOTILLA_EXTRA_CA_CERTS: server.caFile! });
    expect(st.exitCode, st.stderr).toBe(0);
    expect(st.stdout).toMatch(/Bus: reachable — tls:\/\//);
    // With Node's own variable set too, Node's store holds the CA: what was kept aside is not read again.
    const both = await f.flotilla(['status'], {
      ...token,
      NODE_EXTRA_CA_CERTS: server.caFile!,
      FLOTILLA_EXTRA_CA_CERTS: '/nonexistent/ca.pem',
    });
    expect(both.stdout).toMatch(/Bus: reachable — tls:\/\//);
  }, 120_000);
});
