import { existsSync, linkSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Log } from '../../src/audit/logger.js';
import { claim } from '../../src/inbox/claim.js';
import { deliver } from '../../src/inbox/deliver.js';
import { ensureMaildir, maildir, sweepStaleTemp, unreadCount } from '../../src/inbox/maildir.js';
import { list, peek } from '../../src/inbox/read.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

function recordingLog(): Log & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, error() {}, warn: (_o, msg) => void warnings.push(msg ?? '') };
}

function auditEvents(f: TempFleet): Record<string, unknown>[] {
  if (!existsSync(f.layout.auditFile)) return [];
  return readFileSync(f.layout.auditFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('delivery, listing and claiming', () => {
  let f: TempFleet;
  beforeEach(() => {
    f = tempFleet();
  });
  afterEach(() => f.cleanup());

  it('delivers into new/ with the documented name, leaves tmp/ empty, and audits without the body', async () => {
    const d = await deliver(f.layout, { from: 'human', to: 'lead-3kd9p1', kind: 'message', body: 'the secret body\n' });
    const box = maildir(f.layout, 'lead-3kd9p1');
    expect(readdirSync(box.new)).toEqual([d.file]);
    expect(readdirSync(box.tmp)).toEqual([]);
    expect(readdirSync(box.cur)).toEqual([]);
    expect(d.file).toMatch(new RegExp(`^\\d{13}\\.${d.message.id}\\.${process.pid}\\.[A-Za-z0-9_-]+\\.md$`));
    const sent = auditEvents(f).filter((e) => e.event === 'message_sent');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ id: d.message.id, from: 'human', to: 'lead-3kd9p1', kind: 'message' });
    expect(readFileSync(f.layout.auditFile, 'utf8')).not.toContain('secret body');
  });

  it('lists, peeks and claims: claim moves new/x to cur/x:2,S once; a second claim is already_claimed', async () => {
    const a = await deliver(f.layout, { from: 'human', to: 'human', kind: 'message', body: 'first' });
    const b = await deliver(f.layout, { from: 'human', to: 'human', kind: 'message', body: 'second' });
    const items = await list(f.layout, 'human');
    expect(items.map((i) => i.message.body)).toEqual(['first', 'second']);
    expect(unreadCount(f.layout, 'human')).toBe(2);

    const seen = await peek(f.layout, 'human', a.message.id.slice(0, 15));
    expect(seen.message.id).toBe(a.message.id);
    expect(unreadCount(f.layout, 'human')).toBe(2);

    expect(await claim(f.layout, 'human', items[0]!)).toEqual({
      status: 'claimed',
      path: join(maildir(f.layout, 'human').cur, `${a.file}:2,S`),
    });
    expect(await claim(f.layout, 'human', items[0]!)).toEqual({ status: 'already_claimed' });
    expect(unreadCount(f.layout, 'human')).toBe(1);
    expect((await list(f.layout, 'human')).map((i) => i.message.id)).toEqual([b.message.id]);
    const all = await list(f.layout, 'human', { includeRead: true });
    expect(all.map((i) => [i.message.id, i.read])).toEqual([
      [a.message.id, true],
      [b.message.id, false],
    ]);
    expect(auditEvents(f).filter((e) => e.event === 'message_claimed')).toHaveLength(1);
  });

  it('peek with an unknown or ambiguous prefix says what to do', async () => {
    await deliver(f.layout, { from: 'human', to: 'human', kind: 'message', body: 'x' });
    await deliver(f.layout, { from: 'human', to: 'human', kind: 'message', body: 'y' });
    await expect(peek(f.layout, 'human', 'zzzz')).rejects.toThrow(/no message matches 'zzzz'.*flotilla inbox/);
    await expect(peek(f.layout, 'human', '')).rejects.toThrow(/matches 2 messages/);
  });

  it('rejects a body over max_body_bytes with a one-line error pointing at files, and writes nothing', async () => {
    const body = 'x'.repeat(1_048_577);
    await expect(deliver(f.layout, { from: 'human', to: 'human', kind: 'message', body })).rejects.toThrow(
      /^message body is 1\.0 MiB, over the 1 MiB limit \(inbox\.max_body_bytes\) — put large content in a file and send its path$/,
    );
    await expect(
      deliver(f.layout, { from: 'human', to: 'human', kind: 'message', body: 'y'.repeat(20) }, { maxBodyBytes: 10 }),
    ).rejects.toThrow(/over the 10 bytes limit/);
    expect(unreadCount(f.layout, 'human')).toBe(0);
    expect(existsSync(maildir(f.layout, 'human').tmp) ? readdirSync(maildir(f.layout, 'human').tmp) : []).toEqual([]);
  });

  it("counts unread mail from new/'s names alone: a burst, a file that is no message, a dotfile", async () => {
    const box = ensureMaildir(f.layout, 'human');
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        deliver(f.layout, { from: 'human', to: 'human', kind: 'message', body: `m${i}` }),
      ),
    );
    expect(unreadCount(f.layout, 'human')).toBe(40);
    // Not parsed: a damaged file is counted until a reader moves it to bad/; a dotfile never is.
    writeFileSync(join(box.new, '100.bad-yaml.1.h.md'), '---\nid: [unclosed\n---\n');
    writeFileSync(join(box.new, '.editor-swap'), 'not a candidate');
    expect(unreadCount(f.layout, 'human')).toBe(41);
    await list(f.layout, 'human', { log: recordingLog() });
    expect(unreadCount(f.layout, 'human')).toBe(40);
    await claim(
      f.layout,
      'human',
      (await list(f.layout, 'human')).find((i) => i.message.id === burst[0]!.message.id)!,
    );
    expect(unreadCount(f.layout, 'human')).toBe(39);
  });

  it('moves files that are not messages to bad/ with a WARN and an audit line, and keeps the rest flowing', async () => {
    const box = ensureMaildir(f.layout, 'human');
    const good1 = await deliver(f.layout, { from: 'human', to: 'human', kind: 'message', body: 'good 1' });
    writeFileSync(join(box.new, 'dropped-by-hand.txt'), 'not a message at all');
    writeFileSync(join(box.new, '100.bad-yaml.1.h.md'), '---\nid: [unclosed\n---\n');
    writeFileSync(
      join(box.new, '101.bad-field.1.h.md'),
      '---\nid: 0mwrhkm7suessw7cr9j\nfrom: human\nto: human\nkind: message\nsummary: s\npriority: extreme\ntimestamp: 2026-01-01T00:00:00Z\n---\n',
    );
    writeFileSync(
      join(box.new, '102.misdelivered.1.h.md'),
      '---\nid: 0mwrhkm7suessw7cr9k\nfrom: human\nto: someone-else\nkind: message\nsummary: s\ntimestamp: 2026-01-01T00:00:00Z\n---\n',
    );
    writeFileSync(join(box.new, '.editor-swap'), 'ignored: dotfiles are not candidates');
    const good2 = await deliver(f.layout, { from: 'human', to: 'human', kind: 'message', body: 'good 2' });
    const log = recordingLog();

    const items = await list(f.layout, 'human', { log });
    expect(items.map((i) => i.message.id)).toEqual([good1.message.id, good2.message.id]);
    expect(readdirSync(box.bad).sort()).toEqual([
      '100.bad-yaml.1.h.md',
      '101.bad-field.1.h.md',
      '102.misdelivered.1.h.md',
      'dropped-by-hand.txt',
    ]);
    expect(readdirSync(box.new).sort()).toEqual([good1.file, good2.file, '.editor-swap'].sort());
    expect(log.warnings).toHaveLength(4);
    expect(log.warnings.join('\n')).toMatch(/priority/);
    const rejected = auditEvents(f).filter((e) => e.event === 'message_rejected');
    expect(rejected.map((e) => e.file).sort()).toEqual([
      '100.bad-yaml.1.h.md',
      '101.bad-field.1.h.md',
      '102.misdelivered.1.h.md',
      'dropped-by-hand.txt',
    ]);
  });

  it('rejects an oversized file in new/ without reading it whole', async () => {
    const box = ensureMaildir(f.layout, 'human');
    writeFileSync(join(box.new, '1.huge.1.h.md'), '---\n' + 'x'.repeat(200_000));
    expect(await list(f.layout, 'human', { maxBodyBytes: 1000 })).toEqual([]);
    expect(readdirSync(box.bad)).toEqual(['1.huge.1.h.md']);
  });

  it('never overwrites: link() refuses an existing name in new/', async () => {
    const box = ensureMaildir(f.layout, 'human');
    const d = await deliver(f.layout, { from: 'human', to: 'human', kind: 'message', body: 'original' });
    writeFileSync(join(box.tmp, 'other'), 'impostor');
    expect(() => linkSync(join(box.tmp, 'other'), join(box.new, d.file))).toThrow(/EEXIST/);
    expect((await list(f.layout, 'human'))[0]!.message.body).toBe('original');
  });

  it('sweeps tmp/ files older than a day and keeps fresh ones', () => {
    const box = ensureMaildir(f.layout, 'worker-1');
    writeFileSync(join(box.tmp, 'old.md'), 'stale');
    writeFileSync(join(box.tmp, 'fresh.md'), 'in progress');
    const twoDaysAgo = (Date.now() - 2 * 86_400_000) / 1000;
    utimesSync(join(box.tmp, 'old.md'), twoDaysAgo, twoDaysAgo);
    expect(sweepStaleTemp(f.layout, 'worker-1')).toEqual(['old.md']);
    expect(readdirSync(box.tmp)).toEqual(['fresh.md']);
    expect(sweepStaleTemp(f.layout, 'nobody-has-this')).toEqual([]);
  });

  it('counts a missing inbox as 0 unread', () => {
    expect(unreadCount(f.layout, 'never-created')).toBe(0);
  });
});
