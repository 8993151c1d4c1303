import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { busNames } from '../../src/bus/names.js';
import { busFor, closeBuses, type Bus } from '../../src/bus/open.js';
import { defaultConfig } from '../../src/config/schema.js';
import { ensureMaildir, type Maildir } from '../../src/inbox/maildir.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';

/**
 * A harness feeds its Maildir from the bus (src/bus/nats/mail.ts). A message its spool cannot take for a moment (a
 * full disk, a Maildir being remade) must not hold up the feed: it comes back within seconds once the spool can take
 * it, and mail after it keeps arriving, rather than everything the feed had buffered waiting out the consumer's ack
 * wait (30 s).
 */
describe('a feed whose spool fails for a moment (real nats-server)', { timeout: 120_000 }, () => {
  let server: NatsServer;
  let nc: NatsConnection;
  let f: TempFleet;
  let bus: Bus;
  let box: Maildir;
  let stopReceiving: () => Promise<void>;
  beforeAll(async () => {
    server = await natsServer();
    nc = await connect({ servers: server.url });
  }, 120_000);
  afterAll(async () => {
    await nc?.close();
    await server?.kill();
  });
  beforeEach(async () => {
    f = tempFleet();
    box = ensureMaildir(f.layout, 'lead-1');
    bus = busFor(f.layout, { fleet: { ...defaultConfig().fleet, bus: server.url } });
    stopReceiving = await bus.mail.receive(['lead-1']);
  });
  afterEach(async () => {
    await stopReceiving();
    await closeBuses();
    f.cleanup();
  });

  it('the message arrives soon after the spool can take it again, and so does the mail after it', async () => {
    // tmp/ as a plain file: every write into the Maildir fails (ENOTDIR), as it would on a full disk.
    rmSync(box.tmp, { recursive: true });
    writeFileSync(box.tmp, '');
    await bus.mail.deliver({ from: 'human', to: 'lead-1', kind: 'message', body: 'first\n' });
    // The feed failed to spool it and was handed it again: well before the consumer's ack wait of 30 s had passed.
    const jsm = await jetstreamManager(nc);
    const names = busNames(f.layout, null);
    await eventually(
      async () => (await jsm.consumers.info(names.mailStream, names.mailConsumer('lead-1'))).num_redelivered >= 1,
      20_000,
      'the first message handed to the feed again',
    );
    expect(readdirSync(box.new)).toEqual([]);
    rmSync(box.tmp);
    mkdirSync(box.tmp);
    for (let i = 0; i < 5; i++)
      await bus.mail.deliver({ from: 'human', to: 'lead-1', kind: 'message', body: `after ${i}\n` });
    // Well inside the consumer's 30 s ack wait: nothing may be waiting it out.
    await eventually(() => readdirSync(box.new).length === 6, 10_000, 'all six messages in new/');
    const bodies = readdirSync(box.new).map((n) => readFileSync(`${box.new}/${n}`, 'utf8'));
    for (const b of ['first\n', 'after 0\n', 'after 4\n'])
      expect(bodies.filter((x) => x.endsWith(`\n${b}`)).length).toBe(1);
  });
});
