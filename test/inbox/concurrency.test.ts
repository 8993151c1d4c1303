import { execa, type ResultPromise } from 'execa';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claim } from '../../src/inbox/claim.js';
import { deliver } from '../../src/inbox/deliver.js';
import { ensureMaildir, maildir, sweepStaleTemp } from '../../src/inbox/maildir.js';
import { readItem } from '../../src/inbox/read.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

// Fixtures import the built dist/ (npm test builds first), like any other process would.
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/inbox/${name}`, import.meta.url));

/** A body is `text` + `sha256:<hex of text>`: anything torn or mixed fails this. */
function verifyBody(body: string): boolean {
  const m = /^([\s\S]*)sha256:([0-9a-f]{64})\n$/.exec(body);
  return m !== null && createHash('sha256').update(m[1]!).digest('hex') === m[2];
}

describe('concurrent delivery and claiming (real processes)', () => {
  let f: TempFleet;
  beforeEach(() => { f = tempFleet(); });
  afterEach(() => f.cleanup());

  it('50 senders × 200 messages while a reader claims: 10,000 delivered and claimed, 0 lost, 0 twice, 0 partial', async () => {
    const SENDERS = 50;
    const EACH = 200;
    const box = ensureMaildir(f.layout, 'lead-1');
    const senders = Array.from({ length: SENDERS }, (_, i) =>
      execa(process.execPath, [fixture('sender.mjs'), f.layout.root, 'lead-1', String(i), String(EACH)], { reject: false }),
    );
    let running = SENDERS;
    const exits: number[] = [];
    for (const s of senders) void s.then((r) => { exits.push(r.exitCode ?? -1); running--; });

    const claimed = new Map<string, string>(); // message id → file
    let duplicates = 0;
    let partial = 0;
    const perSender = new Map<string, number[]>();
    // The reader runs while the writers write, until they are all done and new/ is empty.
    for (;;) {
      const done = running === 0;
      const names = readdirSync(box.new);
      for (const name of names) {
        const item = await readItem(f.layout, 'lead-1', join(box.new, name));
        if (!item) continue;
        if (!verifyBody(item.message.body)) partial++;
        const r = await claim(f.layout, 'lead-1', item);
        if (r.status !== 'claimed') continue;
        if (claimed.has(item.message.id)) duplicates++;
        claimed.set(item.message.id, name);
        const [, sender, seq] = /^sender (\d+) seq (\d+)\n/.exec(item.message.body) ?? [];
        const list = perSender.get(sender!) ?? [];
        list.push(Number(seq));
        perSender.set(sender!, list);
      }
      if (done && names.length === 0) break;
      if (names.length === 0) await new Promise((r) => setTimeout(r, 5));
    }

    expect(exits.every((c) => c === 0)).toBe(true);
    expect(partial).toBe(0);
    expect(duplicates).toBe(0);
    expect(claimed.size).toBe(SENDERS * EACH);
    // Nothing lost: every sender's every sequence number arrived.
    for (let i = 0; i < SENDERS; i++) expect(perSender.get(String(i))?.sort((a, b) => a - b)).toEqual(Array.from({ length: EACH }, (_, k) => k));
    expect(readdirSync(box.cur)).toHaveLength(SENDERS * EACH);
    expect(readdirSync(box.new)).toEqual([]);
    expect(readdirSync(box.tmp)).toEqual([]);
  }, 300_000); // 10,000 fsync'd deliveries: minutes on a loaded 2-core machine (its speed is in npm run bench)

  it('a sender killed with SIGKILL before link() leaves nothing in new/, only a temp file the sweep removes', async () => {
    const box = ensureMaildir(f.layout, 'lead-1');
    const child = execa(process.execPath, [fixture('stalled-sender.mjs'), f.layout.root, 'lead-1'], { reject: false, buffer: false });
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

  it('two processes claiming from one inbox at once: every message claimed exactly once', async () => {
    const N = 2000;
    for (let i = 0; i < N; i++) await deliver(f.layout, { from: 'human', to: 'lead-1', kind: 'message', body: `m${i}` });
    const go = join(f.project, 'go');
    const claimers = [0, 1].map(() => execa(process.execPath, [fixture('claimer.mjs'), f.layout.root, 'lead-1', go], { reject: false, buffer: false, stdout: 'pipe' }));
    const outputs = claimers.map((c) => collectStdout(c));
    // Start both together, once both are loaded and waiting.
    await Promise.all(claimers.map((c) => firstLine(c)));
    writeFileSync(go, '');
    const results = (await Promise.all(outputs)).map((out) => JSON.parse(out.trim().split('\n').at(-1)!) as { won: string[]; lost: number });

    const all = [...results[0]!.won, ...results[1]!.won];
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(N);
    expect(readdirSync(maildir(f.layout, 'lead-1').new)).toEqual([]);
    expect(readdirSync(maildir(f.layout, 'lead-1').cur)).toHaveLength(N);
    // How the 2000 split depends on scheduling (on a loaded machine one may win nearly all),
    // so only exactly-once is asserted; the split is printed for whoever reads the log.
    console.log(`claimers won ${results.map((r) => r.won.length).join(' / ')}, lost races ${results.map((r) => r.lost).join(' / ')}`);
  }, 180_000); // 2,000 fsync'd deliveries first: slow on a loaded 2-core machine
});

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
    child.stdout!.on('data', (d: Buffer) => { buf += d.toString(); });
    void child.then(() => resolve(buf));
  });
}
