import { existsSync, linkSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deliver } from '../../src/inbox/deliver.js';
import { ensureMaildir } from '../../src/inbox/maildir.js';
import { composeMessage } from '../../src/inbox/message.js';
import type { InboxItem } from '../../src/inbox/read.js';
import { serializeMessage } from '../../src/inbox/serialize.js';
import { UnreadMail } from '../../src/inbox/unread.js';
import { watchDir } from '../../src/inbox/watch-dir.js';
import type { Log } from '../../src/audit/logger.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';

function memoryLog(): { lines: { level: string; msg: string }[]; log: Log } {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (_o: object, msg?: string) => void lines.push({ level, msg: msg ?? '' });
  return { lines, log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('unread mail, keyed by file name', () => {
  let f: TempFleet;
  beforeEach(() => {
    f = tempFleet();
  });
  afterEach(() => f.cleanup());

  /** Links a message into new/ under `name`, as any sender (or a careless script) may. */
  function place(name: string, id: string, body: string): void {
    const box = ensureMaildir(f.layout, 'lead-1');
    const m = composeMessage({ id, from: 'human', to: 'lead-1', kind: 'message', body });
    writeFileSync(join(box.tmp, name), serializeMessage(m));
    linkSync(join(box.tmp, name), join(box.new, name));
  }

  it('two files with one id are both delivered, and the repeat is reported (WARN + audit)', async () => {
    const { lines, log } = memoryLog();
    const got: InboxItem[] = [];
    const mail = new UnreadMail(f.layout, 'lead-1', { log, onNew: (i) => got.push(i) });
    place('1.a.1.h.md', 'sameid000000000001', 'first');
    place('2.b.1.h.md', 'sameid000000000001', 'second');
    await mail.sync();
    expect(got.map((i) => i.message.body).sort()).toEqual(['first', 'second']);
    expect(lines.filter((l) => l.level === 'warn' && l.msg.includes('used twice'))).toHaveLength(1);
    const audit = readFileSync(f.layout.auditFile, 'utf8');
    expect(audit).toContain('"event":"message_duplicate_id"');
    await mail.claim(got.map((i) => i.file));
    expect(mail.size).toBe(0);
  });

  it('a sync compares new/ with what is claimed, not with what was seen: a message taken away and put back is found again', async () => {
    const mail = new UnreadMail(f.layout, 'lead-1');
    const d = await deliver(f.layout, { from: 'human', to: 'lead-1', kind: 'message', body: 'x' });
    await mail.sync();
    expect(mail.items().map((i) => i.file)).toEqual([d.file]);
    const box = ensureMaildir(f.layout, 'lead-1');
    renameSync(d.path, join(box.tmp, 'away'));
    await mail.sync();
    expect(mail.size).toBe(0);
    renameSync(join(box.tmp, 'away'), d.path);
    await mail.sync();
    expect(mail.items().map((i) => i.file)).toEqual([d.file]);
  });

  it('claims only what it holds; a message claimed by someone else is not an error', async () => {
    const mail = new UnreadMail(f.layout, 'lead-1');
    const a = await deliver(f.layout, { from: 'human', to: 'lead-1', kind: 'message', body: 'a' });
    await mail.sync();
    const box = ensureMaildir(f.layout, 'lead-1');
    renameSync(a.path, join(box.cur, `${a.file}:2,S`));
    await mail.claim([a.file]);
    expect(mail.size).toBe(0);
    expect(existsSync(join(box.cur, `${a.file}:2,S`))).toBe(true);
  });
});

describe('watchDir falls back to polling', () => {
  let f: TempFleet;
  const prev = process.env.FLOTILLA_FAULT;
  beforeEach(() => {
    f = tempFleet();
  });
  afterEach(() => {
    if (prev === undefined) delete process.env.FLOTILLA_FAULT;
    else process.env.FLOTILLA_FAULT = prev;
    f.cleanup();
  });

  it('when inotify cannot start (instances used up: injected ENOSPC), it polls at once and still reports arrivals', async () => {
    process.env.FLOTILLA_FAULT = 'watch-enospc';
    const box = ensureMaildir(f.layout, 'lead-1');
    const { lines, log } = memoryLog();
    let hints = 0;
    const w = watchDir(box.new, () => void hints++, { log, pollIntervalMs: 50 });
    try {
      expect(w.polling).toBe(true);
      expect(lines.some((l) => l.level === 'warn' && l.msg.includes('polling instead'))).toBe(true);
      await eventually(() => hints >= 2, 5_000, 'polling hints');
    } finally {
      w.close();
    }
  });
});
