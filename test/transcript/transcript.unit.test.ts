import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import type { ModelMessage } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FlotillaError } from '../../src/errors.js';
import { historyFromTranscript, MISSING_RESULT_TEXT } from '../../src/transcript/history.js';
import { parseTranscript, readTranscript } from '../../src/transcript/reader.js';
import { nodeTranscriptOps, openTranscript, type TranscriptFileOps } from '../../src/transcript/writer.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

const user: ModelMessage = { role: 'user', content: 'list the files' };
const assistantCall: ModelMessage = {
  role: 'assistant',
  content: [
    { type: 'text', text: 'Let me look.' },
    { type: 'tool-call', toolCallId: 'c1', toolName: 'shell', input: { command: 'ls' } },
  ],
};
const toolResult: ModelMessage = {
  role: 'tool',
  content: [
    { type: 'tool-result', toolCallId: 'c1', toolName: 'shell', output: { type: 'text', value: 'a.txt\nb.txt\n' } },
  ],
};

describe('transcript writer and reader', () => {
  let fleet: TempFleet;
  const errors: FlotillaError[] = [];
  beforeEach(() => {
    fleet = tempFleet();
    errors.length = 0;
  });
  afterEach(() => fleet.cleanup());

  const open = (ops?: TranscriptFileOps) =>
    openTranscript(
      fleet.layout,
      { agent_id: 'w-1', def_name: 'worker', model: 'script:demo.yaml' },
      { onError: (e) => errors.push(e), ops },
    );

  it('round-trips a header and every kind of entry, in order, with LF framing', () => {
    const w = open();
    expect(w.append({ type: 'message', message: user })).toBe(true);
    w.append({ type: 'message', message: assistantCall });
    w.append({ type: 'message', message: toolResult });
    w.append({
      type: 'surfaced',
      source: 'inbox',
      ids: ['m1', 'm2'],
      text: '<inbox-message id=m1>hi\u2028there</inbox-message>',
    });
    w.append({ type: 'surfaced', source: 'human', text: 'use the other branch' });
    w.append({
      type: 'approval',
      request_id: 'r1',
      subject: 'shell: git push',
      decision: 'denied',
      by: 'human',
      reason: null,
    });
    w.append({ type: 'end', status: 'completed', exit_reason: null });
    w.close();

    const raw = readFileSync(fleet.layout.transcript('w-1'), 'utf8');
    expect(raw.endsWith('\n')).toBe(true);
    expect(raw.split('\n')).toHaveLength(9);
    expect(JSON.parse(raw.split('\n')[0]!)).toMatchObject({
      type: 'header',
      version: 1,
      agent_id: 'w-1',
      def_name: 'worker',
    });

    const t = readTranscript(fleet.layout, 'w-1');
    expect(t.torn).toBe(false);
    expect(t.skipped).toEqual([]);
    expect(t.header.model).toBe('script:demo.yaml');
    expect(t.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(t.entries.map((e) => e.type)).toEqual([
      'message',
      'message',
      'message',
      'surfaced',
      'surfaced',
      'approval',
      'end',
    ]);
    expect(t.entries[1]).toMatchObject({ type: 'message', message: assistantCall });
    // U+2028 is data inside a JSON string, not a line break.
    expect(t.entries[3]).toMatchObject({
      source: 'inbox',
      ids: ['m1', 'm2'],
      text: '<inbox-message id=m1>hi\u2028there</inbox-message>',
    });
    expect(errors).toEqual([]);
  });

  it('ignores a torn last line left by a crash mid-write', () => {
    const w = open();
    w.append({ type: 'message', message: user });
    w.append({ type: 'message', message: assistantCall });
    w.close();
    appendFileSync(fleet.layout.transcript('w-1'), '{"seq":3,"ts":"2026-01-01T00:00:00.000Z","type":"mess');
    const t = readTranscript(fleet.layout, 'w-1');
    expect(t.torn).toBe(true);
    expect(t.entries.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('continues seq after the existing entries when the same file is opened again', () => {
    const first = open();
    first.append({ type: 'message', message: user });
    first.close();
    const again = open();
    again.append({ type: 'surfaced', source: 'human', text: 'more' });
    again.close();
    const t = readTranscript(fleet.layout, 'w-1');
    expect(t.entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(readFileSync(fleet.layout.transcript('w-1'), 'utf8').match(/"type":"header"/g)).toHaveLength(1);
  });

  it('reports a full disk to onError, keeps the file whole-lined, and records again once space is back', () => {
    let diskFull = false;
    const ops: TranscriptFileOps = {
      ...nodeTranscriptOps,
      write: (fd, buf, off, len) => {
        if (!diskFull) return nodeTranscriptOps.write(fd, buf, off, len);
        // A real short write first, then ENOSPC: the worst case, a torn line on disk.
        if (len > 10) return nodeTranscriptOps.write(fd, buf, off, 10);
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      },
    };
    const w = open(ops);
    expect(w.append({ type: 'message', message: user })).toBe(true);
    diskFull = true;
    expect(w.append({ type: 'message', message: assistantCall })).toBe(false);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/ENOSPC/);
    expect(errors[0]!.message).toContain(fleet.layout.transcript('w-1'));
    diskFull = false;
    expect(w.append({ type: 'message', message: toolResult })).toBe(true);
    w.close();

    const t = readTranscript(fleet.layout, 'w-1');
    expect(t.skipped).toEqual([]);
    expect(t.torn).toBe(false);
    expect(t.entries.map((e) => [e.seq, e.type === 'message' && e.message.role])).toEqual([
      [1, 'user'],
      [2, 'tool'],
    ]);
  });

  it('fences off a torn fragment when it cannot be cut, and the reader skips it', () => {
    let diskFull = false;
    const ops: TranscriptFileOps = {
      ...nodeTranscriptOps,
      write: (fd, buf, off, len) => {
        if (!diskFull) return nodeTranscriptOps.write(fd, buf, off, len);
        if (len > 10) return nodeTranscriptOps.write(fd, buf, off, 10);
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      },
      truncate: () => {
        throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
      },
    };
    const w = open(ops);
    w.append({ type: 'message', message: user });
    diskFull = true;
    w.append({ type: 'message', message: assistantCall });
    diskFull = false;
    expect(w.append({ type: 'end', status: 'failed', exit_reason: 'disk full' })).toBe(true);
    w.close();
    const t = readTranscript(fleet.layout, 'w-1');
    expect(t.entries.map((e) => e.type)).toEqual(['message', 'end']);
    expect(t.skipped).toHaveLength(1);
    expect(t.skipped[0]!.line).toBe(3);
  });

  it('reports a failure to open and writes the header with the first entry that succeeds', () => {
    let failOpen = true;
    const ops: TranscriptFileOps = {
      ...nodeTranscriptOps,
      open: (path) => {
        if (failOpen) throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
        return nodeTranscriptOps.open(path);
      },
    };
    const w = open(ops);
    expect(w.append({ type: 'message', message: user })).toBe(false);
    expect(errors[0]!.message).toMatch(/EMFILE/);
    failOpen = false;
    expect(w.append({ type: 'message', message: toolResult })).toBe(true);
    w.close();
    const t = readTranscript(fleet.layout, 'w-1');
    expect(t.header.agent_id).toBe('w-1');
    expect(t.entries.map((e) => e.seq)).toEqual([1]);
  });

  it('says clearly when a transcript is missing, empty, not a transcript, or too new', () => {
    expect(() => readTranscript(fleet.layout, 'ghost')).toThrow(
      /transcript for 'ghost' is missing — .*ghost\.jsonl does not exist/,
    );
    const path = fleet.layout.transcript('x');
    writeFileSync(path, '');
    expect(() => readTranscript(fleet.layout, 'x')).toThrow(/transcript for 'x' is corrupt: it is empty/);
    writeFileSync(path, '{"hello":1}\n');
    expect(() => readTranscript(fleet.layout, 'x')).toThrow(/first line is not a header/);
    writeFileSync(path, 'garbage\n');
    expect(() => readTranscript(fleet.layout, 'x')).toThrow(/first line is not JSON/);
    writeFileSync(path, '{"type":"header","version":2,"agent_id":"x","def_name":"d","created_at":"t"}\n');
    expect(() => readTranscript(fleet.layout, 'x')).toThrow(
      /format version 2; this flotilla reads up to version 1 — upgrade/,
    );
    writeFileSync(path, '{"type":"header","version":1,"def_name":"d","created_at":"t"}\n');
    expect(() => readTranscript(fleet.layout, 'x')).toThrow(/header is invalid \(agent_id/);
    try {
      readTranscript(fleet.layout, 'ghost');
    } catch (err) {
      expect(err).toBeInstanceOf(FlotillaError);
      expect((err as FlotillaError).code).toBe('not-found');
      expect((err as Error).message).not.toContain('\n');
    }
  });
});

describe('historyFromTranscript', () => {
  const header =
    '{"type":"header","version":1,"agent_id":"a","def_name":"d","created_at":"2026-01-01T00:00:00.000Z"}\n';
  const line = (o: object) => JSON.stringify({ ts: '2026-01-01T00:00:01.000Z', ...o }) + '\n';

  it('rebuilds messages and surfaced input as user turns, in order, skipping approvals and the end', () => {
    const text =
      header +
      line({ seq: 1, type: 'message', message: user }) +
      line({ seq: 2, type: 'message', message: assistantCall }) +
      line({ seq: 3, type: 'message', message: toolResult }) +
      line({
        seq: 4,
        type: 'surfaced',
        source: 'inbox',
        ids: ['m1'],
        text: '<inbox-message id=m1>done</inbox-message>',
      }) +
      line({ seq: 5, type: 'approval', request_id: 'r', subject: 'shell: rm x', decision: 'approved', by: 'human' }) +
      line({ seq: 6, type: 'surfaced', source: 'human', text: 'stop and summarise' }) +
      line({ seq: 7, type: 'message', message: { role: 'assistant', content: 'Summary.' } }) +
      line({ seq: 8, type: 'end', status: 'completed', exit_reason: null });
    const history = historyFromTranscript(parseTranscript(text, 'a').entries);
    expect(history).toEqual([
      user,
      assistantCall,
      toolResult,
      { role: 'user', content: '<inbox-message id=m1>done</inbox-message>' },
      { role: 'user', content: 'stop and summarise' },
      { role: 'assistant', content: 'Summary.' },
    ]);
  });

  it('gives a tool call cut short by a crash an error result, so the history is valid to send', () => {
    const text =
      header +
      line({ seq: 1, type: 'message', message: user }) +
      line({ seq: 2, type: 'message', message: assistantCall });
    const history = historyFromTranscript(parseTranscript(text, 'a').entries);
    expect(history).toHaveLength(3);
    expect(history[2]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'shell',
          output: { type: 'error-text', value: MISSING_RESULT_TEXT },
        },
      ],
    });
  });
});

describe('transcript writer without state/', () => {
  it('creates the transcripts folder when it is missing', () => {
    const fleet = tempFleet();
    try {
      const layout = { ...fleet.layout, transcript: (id: string) => `${fleet.project}/elsewhere/deep/${id}.jsonl` };
      const errors: unknown[] = [];
      const w = openTranscript(layout, { agent_id: 'w-2', def_name: 'worker' }, { onError: (e) => errors.push(e) });
      expect(w.append({ type: 'surfaced', source: 'human', text: 'hi' })).toBe(true);
      w.close();
      expect(errors).toEqual([]);
      expect(readFileSync(`${fleet.project}/elsewhere/deep/w-2.jsonl`, 'utf8').split('\n')).toHaveLength(3);
    } finally {
      fleet.cleanup();
    }
  });
});
