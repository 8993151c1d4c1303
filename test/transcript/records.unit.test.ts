import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatTranscript } from '../../src/transcript/format.js';
import type { TranscriptMetaInput } from '../../src/transcript/meta-schema.js';
import { readMeta, tryReadMeta, updateMeta, writeMeta } from '../../src/transcript/meta.js';
import { readOutput, truncationMarker, utf8Prefix, writeOutput } from '../../src/transcript/output.js';
import { parseTranscript } from '../../src/transcript/reader.js';
import { applyRetention } from '../../src/transcript/retention.js';
import { openTranscript } from '../../src/transcript/writer.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

let fleet: TempFleet;
beforeEach(() => {
  fleet = tempFleet();
});
afterEach(() => fleet.cleanup());

const meta = (id: string, over: Partial<TranscriptMetaInput> = {}): TranscriptMetaInput => ({
  agent_id: id,
  agent_name: 'worker',
  def_name: 'worker',
  status: 'working',
  started_at: '2026-01-01T00:00:00.000Z',
  model: 'script:demo.yaml',
  ...over,
});

describe('meta sidecar', () => {
  it('writes atomically and reads back with defaults filled in', () => {
    writeMeta(
      fleet.layout,
      meta('w-1', { usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.01 }, resumed_from: 'w-0' }),
    );
    const m = readMeta(fleet.layout, 'w-1');
    expect(m).toMatchObject({
      agent_id: 'w-1',
      status: 'working',
      resumed_from: 'w-0',
      turns_used: 0,
      finished_at: null,
      collected_at: null,
    });
    expect(m.usage).toEqual({ inputTokens: 10, outputTokens: 5, costUsd: 0.01 });
    // Atomic: the temp file was renamed away, nothing else is left beside the sidecar.
    expect(readdirSync(fleet.layout.transcriptsDir)).toEqual(['w-1.meta.json']);

    updateMeta(fleet.layout, 'w-1', { status: 'completed', finished_at: '2026-01-01T00:01:00.000Z', turns_used: 3 });
    expect(readMeta(fleet.layout, 'w-1')).toMatchObject({ status: 'completed', turns_used: 3, resumed_from: 'w-0' });
  });

  it('refuses to write an invalid record and explains missing or corrupt sidecars', () => {
    expect(() => writeMeta(fleet.layout, meta('w-2', { status: 'sleeping' as 'idle' }))).toThrow();
    expect(existsSync(fleet.layout.transcriptMeta('w-2'))).toBe(false);
    expect(tryReadMeta(fleet.layout, 'nope')).toBeNull();
    expect(() => readMeta(fleet.layout, 'nope')).toThrow(/transcript metadata for 'nope' is missing/);
    writeFileSync(fleet.layout.transcriptMeta('bad'), '{"agent_id":');
    expect(() => readMeta(fleet.layout, 'bad')).toThrow(/bad\.meta\.json is not JSON — delete it/);
    writeFileSync(fleet.layout.transcriptMeta('bad'), '{"agent_id":"bad"}');
    expect(() => readMeta(fleet.layout, 'bad')).toThrow(/is invalid \(agent_name/);
  });
});

describe('output', () => {
  it('keeps an answer under the cap as is', () => {
    const w = writeOutput(fleet.layout, 'w-1', 'All done.\n', 1024);
    expect(w.truncated).toBe(false);
    expect(readOutput(fleet.layout, 'w-1')).toBe('All done.\n');
  });

  it('cuts an answer over the cap at a UTF-8 boundary and says where the rest is', () => {
    const text = 'é'.repeat(1000); // 2 bytes each
    // 302 leaves an odd number of bytes for 2-byte characters, so a naive cut would split one.
    const max = 302;
    const w = writeOutput(fleet.layout, 'w-1', text, max);
    expect(w.truncated).toBe(true);
    const bytes = readFileSync(fleet.layout.output('w-1'));
    expect(bytes.length).toBeLessThanOrEqual(max);
    const out = bytes.toString('utf8');
    // A cut inside a character would decode to U+FFFD.
    expect(out).not.toContain('\uFFFD');
    const body = out.slice(0, out.indexOf('\n\n[flotilla:'));
    expect(body).toMatch(/^é+$/);
    expect(out).toContain('[flotilla: output truncated to');
    expect(out).toContain(`of 2000 bytes — the full text is in the transcript: flotilla transcript w-1]`);
    expect(out.endsWith(truncationMarker('w-1', Buffer.byteLength(body), 2000))).toBe(true);
  });

  it('finds character boundaries for 1- to 4-byte characters', () => {
    const buf = Buffer.from('a€😀'); // 1 + 3 + 4 bytes
    expect(Buffer.from(utf8Prefix(buf, 1)).toString()).toBe('a');
    expect(Buffer.from(utf8Prefix(buf, 3)).toString()).toBe('a');
    expect(Buffer.from(utf8Prefix(buf, 4)).toString()).toBe('a€');
    expect(Buffer.from(utf8Prefix(buf, 7)).toString()).toBe('a€');
    expect(Buffer.from(utf8Prefix(buf, 8)).toString()).toBe('a€😀');
  });

  it('says clearly when there is no output', () => {
    expect(() => readOutput(fleet.layout, 'w-9')).toThrow(/no output for 'w-9' — it has not finished a task yet/);
  });
});

describe('retention', () => {
  const finishedAgent = (i: number) => {
    const id = `done-${i}`;
    const t = openTranscript(
      fleet.layout,
      { agent_id: id, def_name: 'worker' },
      {
        onError: (e) => {
          throw e;
        },
      },
    );
    t.append({ type: 'end', status: 'completed', exit_reason: null });
    t.close();
    writeMeta(
      fleet.layout,
      meta(id, { status: 'completed', finished_at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() }),
    );
    return id;
  };

  it('keeps the 3 newest finished transcripts and the live one, with no orphan sidecars', () => {
    const ids = [3, 1, 6, 2, 5, 4].map(finishedAgent);
    const live = 'live-1';
    openTranscript(
      fleet.layout,
      { agent_id: live, def_name: 'worker' },
      {
        onError: (e) => {
          throw e;
        },
      },
    ).open();
    // Its sidecar even claims an old finish (a persistent agent between tasks): live wins.
    writeMeta(fleet.layout, meta(live, { status: 'idle', finished_at: '2025-01-01T00:00:00.000Z' }));

    const result = applyRetention(fleet.layout, { maxFiles: 3, outputRetentionSecs: 0, isLive: (id) => id === live });

    expect(result.transcripts.sort()).toEqual(['done-1', 'done-2', 'done-3']);
    expect(result.problems).toEqual([]);
    const left = readdirSync(fleet.layout.transcriptsDir).sort();
    expect(left).toEqual([
      'done-4.jsonl',
      'done-4.meta.json',
      'done-5.jsonl',
      'done-5.meta.json',
      'done-6.jsonl',
      'done-6.meta.json',
      'live-1.jsonl',
      'live-1.meta.json',
    ]);
    expect(ids).toHaveLength(6);
    // Running again changes nothing.
    expect(
      applyRetention(fleet.layout, { maxFiles: 3, outputRetentionSecs: 0, isLive: (id) => id === live }).transcripts,
    ).toEqual([]);
  });

  it('never deletes an unfinished or sidecar-less transcript, and removes an orphan sidecar left by an interrupted run', () => {
    for (const i of [1, 2, 3]) finishedAgent(i);
    writeMeta(fleet.layout, meta('running-but-unregistered', { status: 'working' }));
    openTranscript(
      fleet.layout,
      { agent_id: 'no-meta', def_name: 'worker' },
      {
        onError: (e) => {
          throw e;
        },
      },
    ).open();
    // An earlier run died between deleting a transcript and its sidecar.
    writeMeta(fleet.layout, meta('half-gone', { status: 'failed', finished_at: '2025-06-01T00:00:00.000Z' }));

    const result = applyRetention(fleet.layout, { maxFiles: 2, outputRetentionSecs: 0, isLive: () => false });
    expect(result.transcripts.sort()).toEqual(['done-1', 'half-gone']);
    const left = readdirSync(fleet.layout.transcriptsDir).sort();
    expect(left).toEqual([
      'done-2.jsonl',
      'done-2.meta.json',
      'done-3.jsonl',
      'done-3.meta.json',
      'no-meta.jsonl',
      'running-but-unregistered.meta.json',
    ]);
  });

  it('keeps everything with max_files 0', () => {
    for (const i of [1, 2, 3]) finishedAgent(i);
    expect(
      applyRetention(fleet.layout, { maxFiles: 0, outputRetentionSecs: 0, isLive: () => false }).transcripts,
    ).toEqual([]);
    expect(readdirSync(fleet.layout.transcriptsDir)).toHaveLength(6);
  });

  it('deletes outputs older than retention_secs, except a live agent’s', () => {
    const now = Date.now();
    for (const id of ['old-1', 'old-live', 'new-1']) writeOutput(fleet.layout, id, `answer of ${id}`, 1024);
    const hourAgo = new Date(now - 3600_000);
    utimesSync(fleet.layout.output('old-1'), hourAgo, hourAgo);
    utimesSync(fleet.layout.output('old-live'), hourAgo, hourAgo);
    const result = applyRetention(fleet.layout, {
      maxFiles: 0,
      outputRetentionSecs: 600,
      isLive: (id) => id === 'old-live',
      now,
    });
    expect(result.outputs).toEqual(['old-1']);
    expect(readdirSync(fleet.layout.outputDir).sort()).toEqual(['new-1.md', 'old-live.md']);
    // retention_secs 0 keeps all.
    utimesSync(fleet.layout.output('new-1'), hourAgo, hourAgo);
    expect(
      applyRetention(fleet.layout, { maxFiles: 0, outputRetentionSecs: 0, isLive: () => false, now }).outputs,
    ).toEqual([]);
  });
});

describe('formatTranscript', () => {
  const text =
    [
      {
        type: 'header',
        version: 1,
        agent_id: 'w-1',
        def_name: 'worker',
        model: 'script:x.yaml',
        created_at: '2026-01-01T00:00:00.000Z',
      },
      { seq: 1, ts: '2026-01-01T10:00:01.000Z', type: 'message', message: { role: 'user', content: 'check the repo' } },
      {
        seq: 2,
        ts: '2026-01-01T10:00:02.000Z',
        type: 'message',
        message: {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool-call', toolCallId: 'c1', toolName: 'shell', input: { command: 'git status' } },
            { type: 'tool-call', toolCallId: 'c2', toolName: 'read', input: { path: 'src/a.ts' } },
          ],
        },
      },
      {
        seq: 3,
        ts: '2026-01-01T10:00:03.000Z',
        type: 'message',
        message: {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'shell',
              output: { type: 'text', value: 'On branch main\nl2\nl3\nl4\nl5\n\x1b[31mred\x1b[0m' },
            },
          ],
        },
      },
      {
        seq: 4,
        ts: '2026-01-01T10:00:04.000Z',
        type: 'surfaced',
        source: 'inbox',
        ids: ['m1'],
        text: '<inbox-message id=m1 from=lead>go on</inbox-message>',
      },
      { seq: 5, ts: '2026-01-01T10:00:05.000Z', type: 'surfaced', source: 'human', text: 'skip the tests' },
      {
        seq: 6,
        ts: '2026-01-01T10:00:06.000Z',
        type: 'approval',
        request_id: 'r1',
        subject: 'shell: git push',
        decision: 'denied',
        by: 'timeout',
      },
      { seq: 7, ts: '2026-01-01T10:00:07.000Z', type: 'end', status: 'completed', exit_reason: null },
    ]
      .map((o) => JSON.stringify(o))
      .join('\n') + '\n';

  it('shows roles, compact tool lines with first output lines, inbox and marked human input', () => {
    const t = parseTranscript(text, 'w-1');
    const out = formatTranscript([t.header, ...t.entries], { color: false });
    expect(out).toContain('━━ w-1 · worker · script:x.yaml');
    expect(out).toMatch(/10:00:01 user\n {2}check the repo/);
    expect(out).toContain('  $ git status\n');
    expect(out).toContain('  → read src/a.ts\n');
    expect(out).toContain('    On branch main\n    l2\n    l3\n    … 3 more lines\n');
    expect(out).toContain('inbox: 1 message m1');
    expect(out).toMatch(/human \(typed by a person\)\n {2}skip the tests/);
    expect(out).toContain('approval shell: git push: denied by timeout');
    expect(out).toContain('━━ end: completed');
    expect(out).not.toContain('\x1b');
  });

  it('colours only when asked, and never passes escape sequences from recorded output', () => {
    const t = parseTranscript(text, 'w-1');
    const out = formatTranscript(t.entries, { color: true, outputLines: 10 });
    expect(out).toContain('\x1b[1m');
    expect(out).toContain('[31mred[0m'); // the recorded bytes minus ESC
    expect(out).not.toContain('\x1b[31mred');
  });
});
