import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spoolName } from '../../src/bus/names.js';
import { adoptUnread } from '../../src/inbox/adopt.js';
import { claim } from '../../src/inbox/claim.js';
import { deliver, prepareMessage, writeMessageFile } from '../../src/inbox/deliver.js';
import { ensureMaildir, unreadCount, type Maildir } from '../../src/inbox/maildir.js';
import { list, readItem } from '../../src/inbox/read.js';
import { UnreadMail } from '../../src/inbox/unread.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

function claimedLines(f: TempFleet): number {
  if (!existsSync(f.layout.auditFile)) return 0;
  return readFileSync(f.layout.auditFile, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => (JSON.parse(l) as { event: string }).event === 'message_claimed').length;
}

// A bus hands a message to the spool under a name fixed by its id (writeMessageFile `fixed`),
// and hands it over again when its ack was lost. The second hand-over looks in cur/ and then
// links into new/: a claim of the first copy between the two leaves a second copy in new/.
describe('a message handed over again while its first copy is claimed', () => {
  let f: TempFleet;
  let box: Maildir;
  let file: string;
  let data: Buffer;
  beforeEach(async () => {
    f = tempFleet();
    box = ensureMaildir(f.layout, 'lead-1');
    const prepared = prepareMessage({ from: 'human', to: 'lead-1', kind: 'message', body: 'exactly once\n' });
    data = prepared.data;
    file = spoolName(Date.now(), prepared.message.id);
    // The first hand-over.
    await writeMessageFile(box, file, data, { fixed: true });
  });
  afterEach(() => f.cleanup());

  it('the reader shows it once and a second claimer that read the first copy gets already_claimed', async () => {
    const shown: string[] = [];
    const harness = new UnreadMail(f.layout, 'lead-1', { onNew: (i) => shown.push(i.message.body) });
    await harness.sync();
    // Another reader of the same inbox (`flotilla inbox`, a second claimer) has read the first copy too.
    const other = await readItem(f.layout, 'lead-1', join(box.new, file));
    expect(other).toBeDefined();

    // The redelivery: after its look in cur/ (nothing there yet) and before its link, the harness claims the first
    // copy.
    await writeMessageFile(box, file, data, { fixed: true, beforeLink: () => harness.claim([file]) });
    expect(readdirSync(box.cur)).toEqual([`${file}:2,S`]);

    // The second claimer claims what it read: the name is taken, so it did not claim it.
    expect(await claim(f.layout, 'lead-1', other!)).toEqual({ status: 'already_claimed' });
    // The harness looks at new/ again (a watch event, a rescan): nothing new to show.
    await harness.sync();
    expect(shown).toEqual(['exactly once\n']);
    expect(harness.size).toBe(0);
    expect(claimedLines(f)).toBe(1);
    expect(readdirSync(box.new)).toEqual([]);
    expect(unreadCount(f.layout, 'lead-1')).toBe(0);
  });

  it('a reader drops the second copy without showing it, whoever claimed the first', async () => {
    // The redelivery races a claim by the only reader, which then lists new/ again.
    await writeMessageFile(box, file, data, {
      fixed: true,
      beforeLink: async () => void expect((await claim(f.layout, 'lead-1', file)).status).toBe('claimed'),
    });
    expect(readdirSync(box.new)).toEqual([file]);
    expect(await list(f.layout, 'lead-1')).toEqual([]);
    expect(readdirSync(box.new)).toEqual([]);
    const all = await list(f.layout, 'lead-1', { includeRead: true });
    expect(all.map((i) => [i.file, i.read])).toEqual([[file, true]]);
  });

  it("status's unread count agrees with the reader: the second copy is no unread mail, before any reader drops it", async () => {
    await writeMessageFile(box, file, data, {
      fixed: true,
      beforeLink: async () => void (await claim(f.layout, 'lead-1', file)),
    });
    // A new message beside it is unread, and counted.
    await deliver(f.layout, { from: 'human', to: 'lead-1', kind: 'message', body: 'unread one\n' });
    expect(readdirSync(box.new)).toHaveLength(2);
    expect(unreadCount(f.layout, 'lead-1')).toBe(1);
    expect((await list(f.layout, 'lead-1')).map((i) => i.message.body)).toEqual(['unread one\n']);
    expect(unreadCount(f.layout, 'lead-1')).toBe(1);
  });

  it('a claim of the second copy itself is already_claimed and removes it, leaving the claimed file as it was', async () => {
    await writeMessageFile(box, file, data, {
      fixed: true,
      beforeLink: async () => void (await claim(f.layout, 'lead-1', file)),
    });
    const before = readFileSync(join(box.cur, `${file}:2,S`));
    expect(await claim(f.layout, 'lead-1', file)).toEqual({ status: 'already_claimed' });
    expect(readdirSync(box.new)).toEqual([]);
    expect(readFileSync(join(box.cur, `${file}:2,S`))).toEqual(before);
    expect(claimedLines(f)).toBe(1);
  });

  it('a successor resuming the agent does not adopt the second copy its predecessor already read', async () => {
    await writeMessageFile(box, file, data, {
      fixed: true,
      beforeLink: async () => void (await claim(f.layout, 'lead-1', file)),
    });
    const unread = await deliver(f.layout, { from: 'human', to: 'lead-1', kind: 'message', body: 'not read yet\n' });
    adoptUnread(f.layout, 'lead-1', 'lead-2');
    expect(readdirSync(ensureMaildir(f.layout, 'lead-2').new)).toEqual([unread.file]);
    expect(readdirSync(box.new)).toEqual([]);
  });
});

// A bus may hand a message over again while this process still writes its first copy (a redelivery after the
// server came back, with the first copy waiting on its fsync).
describe('a message handed over twice at once to one process', () => {
  let f: TempFleet;
  beforeEach(() => {
    f = tempFleet();
  });
  afterEach(() => f.cleanup());

  it('both hand-overs succeed and the reader shows it once', async () => {
    const box = ensureMaildir(f.layout, 'lead-1');
    const prepared = prepareMessage({ from: 'human', to: 'lead-1', kind: 'message', body: 'twice at once\n' });
    const file = spoolName(Date.now(), prepared.message.id);
    const copies = Array.from({ length: 8 }, () => writeMessageFile(box, file, prepared.data, { fixed: true }));
    expect(await Promise.all(copies)).toEqual(Array.from({ length: 8 }, () => join(box.new, file)));
    expect(readdirSync(box.new)).toEqual([file]);
    expect(readdirSync(box.tmp)).toEqual([]);
    const shown: string[] = [];
    await new UnreadMail(f.layout, 'lead-1', { onNew: (i) => shown.push(i.message.body) }).sync();
    expect(shown).toEqual(['twice at once\n']);
  });
});
