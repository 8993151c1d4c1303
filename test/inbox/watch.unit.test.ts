import { existsSync, linkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claim } from '../../src/inbox/claim.js';
import { deliver } from '../../src/inbox/deliver.js';
import { ensureMaildir, maildir } from '../../src/inbox/maildir.js';
import { composeMessage } from '../../src/inbox/message.js';
import type { InboxItem } from '../../src/inbox/read.js';
import { serializeMessage } from '../../src/inbox/serialize.js';
import { watchInbox, type InboxWatcher } from '../../src/inbox/watch.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';

describe('watching an inbox', () => {
  let f: TempFleet;
  const watchers: InboxWatcher[] = [];
  beforeEach(() => {
    f = tempFleet();
  });
  afterEach(async () => {
    for (const w of watchers.splice(0)) await w.close();
    f.cleanup();
  });

  function collect(w: InboxWatcher): InboxItem[] {
    const got: InboxItem[] = [];
    w.on('message', (i) => got.push(i));
    return got;
  }

  it('creates the Maildir before watching and reports a message delivered while it watches, once', async () => {
    const w = watchInbox(f.layout, 'lead-1', { rescanSecs: 0.05 });
    watchers.push(w);
    const got = collect(w);
    await w.ready;
    expect(w.polling).toBe(false);
    const d = await deliver(f.layout, { from: 'human', to: 'lead-1', kind: 'message', body: 'live' });
    await eventually(() => got.length === 1, 5000, 'the live message');
    // Several rescans later it is still reported only once (dedupe by file name).
    await new Promise((r) => setTimeout(r, 300));
    expect(got.map((i) => i.message.id)).toEqual([d.message.id]);
    expect(got[0]!.message.body).toBe('live');
  });

  it('the startup scan finds a message placed in new/ while no watch was active', async () => {
    const before = await deliver(f.layout, {
      from: 'human',
      to: 'lead-1',
      kind: 'message',
      body: 'sent while offline',
    });
    const w = watchInbox(f.layout, 'lead-1');
    watchers.push(w);
    await w.ready;
    // No listener yet: the message waits, then goes to the first listener attached.
    const got = collect(w);
    expect(got.map((i) => i.message.id)).toEqual([before.message.id]);
  });

  it('with poll: always, reports a message linked in by hand (no inotify involved)', async () => {
    const w = watchInbox(f.layout, 'lead-1', { poll: 'always', pollIntervalMs: 50 });
    watchers.push(w);
    const got = collect(w);
    await w.ready;
    expect(w.polling).toBe(true);
    const box = maildir(f.layout, 'lead-1');
    const m = composeMessage({ from: 'human', to: 'lead-1', kind: 'message', body: 'linked by hand' });
    writeFileSync(join(box.tmp, 'by-hand.md'), serializeMessage(m));
    linkSync(join(box.tmp, 'by-hand.md'), join(box.new, 'by-hand.md'));
    await eventually(() => got.length === 1, 5000, 'the polled message');
    expect(got[0]!.message.id).toBe(m.id);
  });

  it('rescan() picks up what no event reported, and forgets claimed names', async () => {
    const w = watchInbox(f.layout, 'lead-1', { poll: 'always', pollIntervalMs: 60_000, rescanSecs: 3600 });
    watchers.push(w);
    const got = collect(w);
    await w.ready;
    const d = await deliver(f.layout, { from: 'human', to: 'lead-1', kind: 'message', body: 'missed by the watcher' });
    expect(got).toEqual([]);
    await w.rescan();
    expect(got.map((i) => i.message.id)).toEqual([d.message.id]);
    expect((await claim(f.layout, 'lead-1', got[0]!)).status).toBe('claimed');
    await w.rescan();
    expect(got).toHaveLength(1);
  });

  it('moves a bad file to bad/ and keeps delivering the good ones', async () => {
    const w = watchInbox(f.layout, 'lead-1');
    watchers.push(w);
    const got = collect(w);
    await w.ready;
    const box = ensureMaildir(f.layout, 'lead-1');
    writeFileSync(join(box.new, 'garbage.md'), 'no frontmatter here');
    const d = await deliver(f.layout, { from: 'human', to: 'lead-1', kind: 'message', body: 'good' });
    await eventually(() => got.length === 1, 5000, 'the good message');
    expect(got[0]!.message.id).toBe(d.message.id);
    await eventually(() => existsSync(join(box.bad, 'garbage.md')), 5000, 'garbage in bad/');
    expect(existsSync(join(box.new, 'garbage.md'))).toBe(false);
  });

  it('works as an async iterator and ends when closed', async () => {
    const w = watchInbox(f.layout, 'lead-1');
    await w.ready;
    const sent = [];
    for (let i = 0; i < 3; i++)
      sent.push((await deliver(f.layout, { from: 'human', to: 'lead-1', kind: 'message', body: `n${i}` })).message.id);
    const got: string[] = [];
    for await (const item of w) {
      got.push(item.message.id);
      if (got.length === 3) break; // break calls return(), which closes the watcher
    }
    expect(got.sort()).toEqual(sent.sort());
    const it2 = w[Symbol.asyncIterator]();
    expect(await it2.next()).toEqual({ value: undefined, done: true });
  });
});
