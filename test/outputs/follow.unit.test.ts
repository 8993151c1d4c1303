import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readNewLines } from '../../src/layout/read-lines.js';
import { followTranscript, type TranscriptRecord } from '../../src/transcript/follow.js';
import { tempDir } from '../helpers/fleet.js';

const header = JSON.stringify({
  type: 'header',
  version: 1,
  agent_id: 'w-1',
  def_name: 'w',
  created_at: '2026-01-01T00:00:00.000Z',
});
const msg = (seq: number, text: string) =>
  JSON.stringify({ seq, ts: '2026-01-01T00:00:01.000Z', type: 'message', message: { role: 'user', content: text } });
const end = (seq: number) =>
  JSON.stringify({ seq, ts: '2026-01-01T00:00:02.000Z', type: 'end', status: 'completed', exit_reason: null });

describe('transcript follow (LF framing)', () => {
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  beforeEach(() => {
    dir = tempDir();
    path = join(dir.dir, 't.jsonl');
  });
  afterEach(() => dir.cleanup());

  it('returns whole lines only, keeps a partial line for later, and never splits on U+2028', () => {
    writeFileSync(path, `${header}\n${msg(1, 'a\u2028b')}\n{"seq":2,"par`);
    const first = readNewLines(path, 0);
    expect(first.lines).toHaveLength(2);
    expect(JSON.parse(first.lines[1]!).message.content).toBe('a\u2028b');
    appendFileSync(path, `tial":1}\n`);
    const second = readNewLines(path, first.offset);
    expect(second.lines).toEqual(['{"seq":2,"partial":1}']);
    expect(readNewLines(path, second.offset).lines).toEqual([]);
    expect(readNewLines(join(dir.dir, 'missing.jsonl'), 0)).toEqual({ lines: [], offset: 0 });
  });

  it('follows appends until the end entry, reporting lines that are not records', async () => {
    writeFileSync(path, `${header}\n${msg(1, 'first')}\n`);
    const seen: TranscriptRecord[] = [];
    const skipped: number[] = [];
    const following = followTranscript(
      path,
      (r) => {
        seen.push(r);
        if (r.type === 'message' && seen.length === 2)
          appendFileSync(path, `not json\n${msg(2, 'second')}\n${end(3)}\n`);
      },
      { isDone: () => false, onSkip: (line) => skipped.push(line), pollMs: 20 },
    );
    await following;
    expect(seen.map((r) => r.type)).toEqual(['header', 'message', 'message', 'end']);
    expect(skipped).toEqual([3]);
  });

  it('stops when the agent is gone even without an end entry (a crash)', async () => {
    writeFileSync(path, `${header}\n${msg(1, 'only')}\n`);
    const seen: TranscriptRecord[] = [];
    await followTranscript(path, (r) => seen.push(r), { isDone: () => true, pollMs: 20 });
    expect(seen.map((r) => r.type)).toEqual(['header', 'message']);
  });
});
