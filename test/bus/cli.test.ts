import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { unreadCount } from '../../src/inbox/maildir.js';
import { list } from '../../src/inbox/read.js';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';

/** `fleet.bus: nats://…` through the built CLI, against a real nats-server (docs/design.md §18). */
describe('flotilla send and status on a nats:// bus (built CLI, real nats-server)', () => {
  let server: NatsServer;
  let f: TempFleet;
  beforeAll(async () => {
    server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server.kill();
  });
  beforeEach(() => {
    f = tempFleet();
  });
  afterEach(() => f.cleanup());

  // A plain shell, the bus named by the environment as a person would for one shell.
  const cli = (args: string[], env: Record<string, string> = {}) =>
    flotilla(['--root', f.layout.root, ...args], {
      cwd: f.project,
      stdin: 'ignore',
      env: {
        FLOTILLA_AGENT_ID: '',
        XDG_CONFIG_HOME: join(f.project, 'xdg'),
        FLOTILLA_ROOT: '',
        FLOTILLA_FLEET_BUS: server.url,
        ...env,
      },
    });
  const outbox = () => {
    try {
      return readdirSync(join(f.layout.outbox, 'new'));
    } catch {
      return [];
    }
  };

  it('send human: the message travels the stream; status brings it into the Maildir once and says the bus is reachable', async () => {
    const r = await cli(['send', 'human', 'over the bus']);
    expect(r.exitCode).toBe(0);
    const id = String(r.stdout).trim();
    // Nothing wrote the person's Maildir: the mail is on the stream, and the outbox is empty.
    expect(unreadCount(f.layout, 'human')).toBe(0);
    expect(outbox()).toEqual([]);

    const s = await cli(['status']);
    expect(s.exitCode).toBe(0);
    expect(String(s.stdout)).toContain('1 unread message for you');
    expect(String(s.stdout)).toMatch(/Bus: reachable — nats:\/\/127\.0\.0\.1:\d+ \(nats-server /);
    const items = await list(f.layout, 'human');
    expect(items.map((i) => [i.message.id, i.message.from, i.message.body])).toEqual([[id, 'human', 'over the bus']]);

    // A later look, with the person's consumer on the stream already and nothing new on it, exits.
    const again = await cli(['status']);
    expect(again.exitCode).toBe(0);
    expect(String(again.stdout)).toContain('1 unread message for you');
    // And the next one brings the next message.
    const r2 = await cli(['send', 'human', 'the second over the bus']);
    expect(r2.exitCode).toBe(0);
    const s2 = await cli(['status']);
    expect(s2.exitCode).toBe(0);
    expect(String(s2.stdout)).toContain('2 unread messages for you');
    expect((await list(f.layout, 'human')).map((i) => i.message.body).sort()).toEqual([
      'over the bus',
      'the second over the bus',
    ]);
  });

  it('status reads the bus without the NATS client; task list reads it from its own file, through one code cache of its own', async () => {
    const cache = join(f.project, 'cache');
    const cacheNames = () =>
      readdirSync(join(cache, 'flotilla', 'v8'))
        .map((n) => n.replace(/-[0-9a-z]+-(?:[0-9a-f]{16}|\d+-\d+)-v[\d.]+-\w+\.cache$/, ''))
        .sort();
    // A look that writes nothing reads over the bare reader (src/bus/nats/wire.ts): the client is never loaded.
    expect(String((await cli(['status'], { XDG_CACHE_HOME: cache })).stdout)).toMatch(/Bus: reachable — nats:/);
    // The router's own cache (`start`) is every command's.
    expect(cacheNames()).toEqual(['fast-status', 'start']);
    for (const args of [['task', 'list'], ['status']]) {
      const r = await cli(args, { XDG_CACHE_HOME: cache });
      expect(r.exitCode, `${args.join(' ')}: ${String(r.stderr)}`).toBe(0);
    }
    expect(String((await cli(['status'], { XDG_CACHE_HOME: cache })).stdout)).toMatch(/Bus: reachable — nats:/);
    // One cache for the client, whichever fast command read it first.
    expect(cacheNames()).toEqual(['fast-status', 'fast-task', 'nats-client', 'start']);
  });

  it('bus down: send still succeeds and says the mail waits in the outbox; status says UNREACHABLE; once the bus is back it arrives once', async () => {
    await server.stop();
    try {
      const r = await cli(['send', 'human', 'while the bus was away']);
      expect(r.exitCode).toBe(0);
      const id = String(r.stdout).trim();
      expect(String(r.stderr)).toMatch(/the bus nats:\/\/\S+ is unreachable: the message waits in this host's outbox/);
      expect(outbox()).toHaveLength(1);

      const s = await cli(['status']);
      expect(String(s.stdout)).toMatch(
        /Bus: UNREACHABLE — nats:\/\/\S+ unreachable: .*; 1 message\(s\) waiting in the outbox/,
      );
      expect(unreadCount(f.layout, 'human')).toBe(0);

      await server.start();
      await eventually(
        async () => String((await cli(['status'])).stdout).includes('1 unread message for you'),
        60_000,
        'the queued message delivered',
      );
      expect((await list(f.layout, 'human')).map((i) => [i.message.id, i.message.body])).toEqual([
        [id, 'while the bus was away'],
      ]);
      expect(outbox()).toEqual([]);
    } finally {
      await server.start().catch(() => undefined);
    }
  });

  it('fleet.bus that is not maildir or a nats:// URL: refused with one line naming the key', async () => {
    const r = await cli(['send', 'human', 'hi'], { FLOTILLA_FLEET_BUS: 'http://example' });
    expect(r.exitCode).not.toBe(0);
    expect(String(r.stderr).trimEnd().split('\n')).toHaveLength(1);
    expect(String(r.stderr)).toMatch(/fleet\.bus.*expected 'maildir' or nats:\/\/host:port/);
    expect(unreadCount(f.layout, 'human')).toBe(0);
  });

  it("doctor names the bus and its server's version, WARNs on a nats-server before 2.9.15, and FAILs on a bus it cannot reach", async () => {
    const r = await cli(['doctor']);
    const bus = String(r.stdout)
      .split('\n')
      .find((l) => l.includes(` bus (fleet.bus: ${server.url}):`));
    const version = /\(nats-server (\d+)\.(\d+)\.(\d+),/.exec(bus ?? '');
    expect(version, String(r.stdout)).not.toBeNull();
    const [major, minor, patch] = version!.slice(1).map(Number) as [number, number, number];
    // 2.9.15 is the first release that makes a stream's store before listing the stream (src/bus/nats/store-window.ts).
    const before = major * 1e6 + minor * 1e3 + patch < 2_009_015;
    if (before) expect(bus).toMatch(/^WARN {2}bus .* — upgrade nats-server to 2\.9\.15 or newer/);
    else expect(bus).toMatch(/^ok {4}bus /);

    const down = await cli(['doctor'], { FLOTILLA_FLEET_BUS: 'nats://127.0.0.1:1' });
    expect(down.exitCode).not.toBe(0);
    expect(String(down.stdout)).toMatch(
      /^FAIL {2}bus \(fleet\.bus: nats:\/\/127\.0\.0\.1:1\): .*unreachable.* — start it \(nats-server -js\) or check fleet\.bus$/m,
    );
  }, 120_000);
});
