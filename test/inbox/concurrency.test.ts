import { execa, type ResultPromise } from 'execa';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { busFor, closeBuses, type Bus } from '../../src/bus/open.js';
import { defaultConfig } from '../../src/config/schema.js';
import { claim } from '../../src/inbox/claim.js';
import { deliver } from '../../src/inbox/deliver.js';
import { ensureMaildir, maildir, sweepStaleTemp, unreadCount } from '../../src/inbox/maildir.js';
import { list, readItem } from '../../src/inbox/read.js';
import { UnreadMail } from '../../src/inbox/unread.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';

// Fixtures import the built dist/ (npm test builds first), like any other process would.
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/inbox/${name}`, import.meta.url));

/** A body is `text` + `sha256:<hex of text>`: anything torn or mixed fails this. */
function verifyBody(body: string): boolean {
  const m = /^([\s\S]*)sha256:([0-9a-f]{64})\n$/.exec(body);
  return m !== null && createHash('sha256').update(m[1]!).digest('hex') === m[2];
}

// The guarantees hold on every bus (docs/design.md §18): the same tests, once per bus, against a
// real nats-server started here for the nats:// run.
let server: NatsServer | undefined;
beforeAll(async () => {
  server = await natsServer();
}, 120_000);
afterAll(async () => {
  await closeBuses();
  await server?.kill();
});

const BUSES = [{ bus: 'maildir' }, { bus: 'nats' }] as const;

describe.each(BUSES)('concurrent delivery and claiming on the $bus bus (real processes)', ({ bus: kind }) => {
  let f: TempFleet;
  let url: string;
  let bus: Bus;
  let stopReceiving: () => Promise<void>;
  beforeEach(async () => {
    f = tempFleet();
    url = kind === 'maildir' ? 'maildir' : server!.url;
    bus = busFor(f.layout, { fleet: { ...defaultConfig().fleet, bus: url } });
    // The recipient's side keeps its spool fed from the bus (nothing to do on maildir).
    stopReceiving = await bus.mail.receive(['lead-1']);
  });
  afterEach(async () => {
    await stopReceiving();
    await closeBuses();
    f.cleanup();
  });

  it('50 senders × 200 messages while a reader claims: 10,000 delivered and claimed, 0 lost, 0 twice, 0 partial', async () => {
    const { claimed, exits } = await sendAndClaim(f, url, 50, 200);
    const box = maildir(f.layout, 'lead-1');
    expect(exits.every((c) => c === 0)).toBe(true);
    expect(claimed.partial).toBe(0);
    expect(claimed.duplicates).toBe(0);
    expect(claimed.ids.size).toBe(10_000);
    // Nothing lost: every sender's every sequence number arrived.
    for (let i = 0; i < 50; i++)
      expect(claimed.perSender.get(String(i))?.sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, k) => k));
    expect(readdirSync(box.cur)).toHaveLength(10_000);
    expect(readdirSync(box.new)).toEqual([]);
    expect(readdirSync(box.tmp)).toEqual([]);
    // 10,000 fsync'd deliveries (twice on nats: outbox and spool): minutes on a loaded 2-core machine
    // (its speed is in npm run bench).
  }, 900_000);

  it('two processes claiming from one inbox at once: every message claimed exactly once', async () => {
    const N = 2000;
    for (let i = 0; i < N; i++) await bus.mail.deliver({ from: 'human', to: 'lead-1', kind: 'message', body: `m${i}` });
    // On nats the spool is fed from the stream: wait until it holds them all.
    await eventually(() => readdirSync(maildir(f.layout, 'lead-1').new).length === N, 120_000, `${N} messages in new/`);
    const go = join(f.project, 'go');
    const claimers = [0, 1].map(() =>
      execa(process.execPath, [fixture('claimer.mjs'), f.layout.root, 'lead-1', go], {
        reject: false,
        buffer: false,
        stdout: 'pipe',
      }),
    );
    const outputs = claimers.map((c) => collectStdout(c));
    // Start both together, once both are loaded and waiting.
    await Promise.all(claimers.map((c) => firstLine(c)));
    writeFileSync(go, '');
    const results = (await Promise.all(outputs)).map(
      (out) => JSON.parse(out.trim().split('\n').at(-1)!) as { won: string[]; lost: number },
    );

    const all = [...results[0]!.won, ...results[1]!.won];
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(N);
    expect(readdirSync(maildir(f.layout, 'lead-1').new)).toEqual([]);
    expect(readdirSync(maildir(f.layout, 'lead-1').cur)).toHaveLength(N);
    // How the 2000 split depends on scheduling (on a loaded machine one may win nearly all),
    // so only exactly-once is asserted; the split is printed for whoever reads the log.
    console.log(
      `claimers won ${results.map((r) => r.won.length).join(' / ')}, lost races ${results.map((r) => r.lost).join(' / ')}`,
    );
  }, 600_000); // 2,000 fsync'd deliveries first (outbox and spool on nats): slow on a loaded 2-core machine
  it('nats-server killed during 50 × 200 sends and started again: every message claimed once, none lost', async () => {
    if (kind === 'maildir') return expect(url).toBe('maildir'); // nothing to kill: the maildir run above is the same test
    const { claimed, exits } = await sendAndClaim(f, url, 50, 200, async (sentSoFar) => {
      // Once some mail has gone through, take the bus away mid-stream, then bring it back.
      await eventually(() => sentSoFar() >= 1000, 600_000, '1,000 messages claimed before the outage');
      await server!.stop();
      await new Promise((r) => setTimeout(r, 1500));
      await server!.start();
    });
    expect(exits.every((c) => c === 0)).toBe(true);
    expect(claimed.duplicates).toBe(0);
    expect(claimed.partial).toBe(0);
    expect(claimed.ids.size).toBe(10_000);
    for (let i = 0; i < 50; i++)
      expect(claimed.perSender.get(String(i))?.sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, k) => k));
    // Nothing left behind: the outbox is empty once the bus has everything.
    await eventually(
      () => !existsSync(join(f.layout.outbox, 'new')) || readdirSync(join(f.layout.outbox, 'new')).length === 0,
      60_000,
      'an empty outbox',
    );
  }, 900_000);
});

describe('a sender killed before link()', () => {
  let f: TempFleet;
  beforeEach(() => {
    f = tempFleet();
  });
  afterEach(() => f.cleanup());

  it('a sender killed with SIGKILL before link() leaves nothing in new/, only a temp file the sweep removes', async () => {
    const box = ensureMaildir(f.layout, 'lead-1');
    const child = execa(process.execPath, [fixture('stalled-sender.mjs'), f.layout.root, 'lead-1'], {
      reject: false,
      buffer: false,
    });
    const tmpPath = await firstLine(child);
    expect(existsSync(tmpPath)).toBe(true);
    child.kill('SIGKILL');
    const r = await child;
    expect(r.signal).toBe('SIGKILL');

    expect(readdirSync(box.new)).toEqual([]);
    expect(readdirSync(box.tmp)).toEqual([basename(tmpPath)]);
    // Fresh temp files belong to writers that may still be working: the sweep keeps them.
    expect(sweepStaleTemp(f.layout, 'lead-1')).toEqual([]);
    const old = (Date.now() - 25 * 3600_000) / 1000;
    utimesSync(tmpPath, old, old);
    expect(sweepStaleTemp(f.layout, 'lead-1')).toEqual([basename(tmpPath)]);
    expect(readdirSync(box.tmp)).toEqual([]);
  });
});

describe('a claimer killed between its link into cur/ and its unlink of new/', () => {
  let f: TempFleet;
  beforeEach(() => {
    f = tempFleet();
  });
  afterEach(() => f.cleanup());

  it('leaves the message claimed: a restarted reader neither shows it again nor loses it', async () => {
    const box = ensureMaildir(f.layout, 'lead-1');
    const d = await deliver(f.layout, { from: 'human', to: 'lead-1', kind: 'message', body: 'claimed once\n' });
    const child = execa(process.execPath, [fixture('stalled-claimer.mjs'), f.layout.root, 'lead-1', d.file], {
      reject: false,
      buffer: false,
    });
    const claimedPath = await firstLine(child);
    child.kill('SIGKILL');
    expect((await child).signal).toBe('SIGKILL');
    // The crash left the message in both folders, one file under two names.
    expect(statSync(claimedPath).ino).toBe(statSync(join(box.new, d.file)).ino);

    // The harness starts again and reads its inbox as it does at start.
    const shown: string[] = [];
    const reader = new UnreadMail(f.layout, 'lead-1', { onNew: (i) => shown.push(i.file) });
    await reader.sync();
    expect(shown).toEqual([]);
    expect(readdirSync(box.new)).toEqual([]);
    expect(unreadCount(f.layout, 'lead-1')).toBe(0);
    // Not lost: it is read, once, with its content.
    const all = await list(f.layout, 'lead-1', { includeRead: true });
    expect(all.map((i) => [i.file, i.read, i.message.body])).toEqual([[d.file, true, 'claimed once\n']]);
    expect(await claim(f.layout, 'lead-1', d.file)).toEqual({ status: 'already_claimed' });
  });

  it('a claimer that read it before the crash gets already_claimed, and the new/ name is gone', async () => {
    const box = ensureMaildir(f.layout, 'lead-1');
    const d = await deliver(f.layout, { from: 'human', to: 'lead-1', kind: 'message', body: 'one winner\n' });
    const item = await readItem(f.layout, 'lead-1', join(box.new, d.file));
    const child = execa(process.execPath, [fixture('stalled-claimer.mjs'), f.layout.root, 'lead-1', d.file], {
      reject: false,
      buffer: false,
    });
    await firstLine(child);
    child.kill('SIGKILL');
    await child;
    expect(await claim(f.layout, 'lead-1', item!)).toEqual({ status: 'already_claimed' });
    expect(readdirSync(box.new)).toEqual([]);
    expect(readdirSync(box.cur)).toEqual([`${d.file}:2,S`]);
  });
});

interface Claimed {
  ids: Map<string, string>;
  duplicates: number;
  partial: number;
  perSender: Map<string, number[]>;
}

/**
 * SENDERS processes each deliver EACH messages to lead-1 on the bus at `url` while this
 * process reads and claims lead-1's new/ as a harness does, until every sender has exited
 * and every message is claimed (or, when some never come, a minute after the last sender).
 * `during` runs beside it, given how many are claimed so far (an outage test's hook).
 */
async function sendAndClaim(
  f: TempFleet,
  url: string,
  SENDERS: number,
  EACH: number,
  during?: (claimedSoFar: () => number) => Promise<void>,
): Promise<{ claimed: Claimed; exits: number[] }> {
  const box = ensureMaildir(f.layout, 'lead-1');
  const senders = Array.from({ length: SENDERS }, (_, i) =>
    execa(process.execPath, [fixture('sender.mjs'), f.layout.root, 'lead-1', String(i), String(EACH), url], {
      reject: false,
    }),
  );
  let running = SENDERS;
  const exits: number[] = [];
  for (const s of senders)
    void s.then((r) => {
      exits.push(r.exitCode ?? -1);
      running--;
    });
  const claimed: Claimed = { ids: new Map(), duplicates: 0, partial: 0, perSender: new Map() };
  // Settled as it ends, so a failure beside the loop is reported once the loop is done, not as an unhandled rejection.
  const side = during
    ? during(() => claimed.ids.size).then(
        () => null,
        (err: unknown) => err,
      )
    : Promise.resolve(null);
  let giveUpAt = Infinity;
  for (;;) {
    const done = running === 0;
    if (done && giveUpAt === Infinity) giveUpAt = Date.now() + 60_000;
    const names = readdirSync(box.new);
    for (const name of names) {
      const item = await readItem(f.layout, 'lead-1', join(box.new, name));
      if (!item) continue;
      if (!verifyBody(item.message.body)) claimed.partial++;
      const r = await claim(f.layout, 'lead-1', item);
      if (r.status !== 'claimed') continue;
      if (claimed.ids.has(item.message.id)) claimed.duplicates++;
      claimed.ids.set(item.message.id, name);
      const [, sender, seq] = /^sender (\d+) seq (\d+)\n/.exec(item.message.body) ?? [];
      const list = claimed.perSender.get(sender!) ?? [];
      list.push(Number(seq));
      claimed.perSender.set(sender!, list);
    }
    // Mail still on its way through a bus arrives after the senders have gone.
    if (done && names.length === 0 && (claimed.ids.size >= SENDERS * EACH || Date.now() > giveUpAt)) break;
    if (names.length === 0) await new Promise((r) => setTimeout(r, 5));
  }
  const sideError = await side;
  if (sideError) throw sideError;
  return { claimed, exits };
}

function firstLine(child: ResultPromise): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const i = buf.indexOf('\n');
      if (i !== -1) resolve(buf.slice(0, i));
    });
    child.stdout!.on('end', () => reject(new Error(`no line from fixture; got '${buf}'`)));
  });
}

function collectStdout(child: ResultPromise): Promise<string> {
  return new Promise((resolve) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
    });
    void child.then(() => resolve(buf));
  });
}
