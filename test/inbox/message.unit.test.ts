import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { composeMessage, summarize, headerOf, type InboxMessage } from '../../src/inbox/message.js';
import { BadMessageError, parseMessage } from '../../src/inbox/parse.js';
import { messageJsonSchema } from '../../src/inbox/schema-json.js';
import { serializeMessage } from '../../src/inbox/serialize.js';

const INBOX_DIR = fileURLToPath(new URL('../../inbox/', import.meta.url));

describe('message schema and file format', () => {
  it('round-trips every kind through the file format unchanged', () => {
    const drafts: InboxMessage[] = [
      composeMessage({
        from: 'human',
        to: 'lead-3kd9p1',
        kind: 'message',
        body: 'hello\n\nworld\n',
        in_reply_to: '0mwrhkm7suessw7cr9j',
      }),
      composeMessage({ from: 'sys', to: 'human', kind: 'system', priority: 'low', body: '' }),
      composeMessage({
        from: 'worker-7k2m9q',
        to: 'lead-3kd9p1',
        kind: 'completion',
        body: 'done',
        status: 'failed',
        exit_reason: 'max_turns',
        turns: 20,
        usage: { input_tokens: 5, output_tokens: 7, cost_usd: 0.5 },
        output_path: '/tmp/out put.md',
      }),
      composeMessage({
        from: 'a1',
        to: 'human',
        kind: 'approval_request',
        request_id: '0mwrhn1c6ab12cd34ef',
        tool: 'shell',
        body: 'may I?',
      }),
      composeMessage({
        from: 'a1',
        to: 'human',
        kind: 'secret_request',
        request_id: '0mwrhn1c6ab12cd34eg',
        key: 'GITHUB_TOKEN',
        body: '',
      }),
    ];
    for (const m of drafts) expect(parseMessage(serializeMessage(m))).toEqual(m);
  });

  it('keeps values YAML would misread (numbers, yes/no, dates, quotes, colons) as strings', () => {
    for (const summary of [
      '123',
      'yes',
      'null',
      '2026-01-01',
      'a: b',
      '"quoted" \\ back',
      '- dash',
      '# hash',
      'ünïcödé ✓',
      '0x1F',
    ]) {
      const m = composeMessage({ from: 'human', to: 'human', kind: 'message', summary, body: 'x' });
      expect(parseMessage(serializeMessage(m)).summary).toBe(summary);
    }
  });

  it('writes the fields in the documented order', () => {
    const text = serializeMessage(composeMessage({ from: 'human', to: 'human', kind: 'message', body: 'b' }));
    expect(
      text
        .split('\n')
        .slice(1, 8)
        .map((l) => l.split(':')[0]),
    ).toEqual(['id', 'from', 'to', 'kind', 'summary', 'priority', 'timestamp']);
  });

  it('gives time-sortable ids and a default summary from the first line', () => {
    const a = composeMessage({ from: 'human', to: 'human', kind: 'message', body: '\n\n# Title here\nmore' }, 1_000);
    const b = composeMessage({ from: 'human', to: 'human', kind: 'message', body: 'x' }, 2_000);
    expect(a.id < b.id).toBe(true);
    expect(a.summary).toBe('Title here');
    expect(a.priority).toBe('normal');
    expect(summarize('x'.repeat(300))).toHaveLength(200);
    expect(summarize('')).toBe('(no text)');
    expect(summarize('tab\there\u001b[31m red')).toBe('tab here [31m red');
  });

  it('rejects a summary over 200 characters or with a newline, and unknown kinds', () => {
    expect(() =>
      composeMessage({ from: 'human', to: 'human', kind: 'message', summary: 'x'.repeat(201), body: '' }),
    ).toThrow();
    expect(() =>
      composeMessage({ from: 'human', to: 'human', kind: 'message', summary: 'two\nlines', body: '' }),
    ).toThrow();
    expect(() => composeMessage({ from: 'human', to: '../etc', kind: 'message', body: '' })).toThrow();
    expect(() =>
      parseMessage(
        '---\nid: 0mwrhkm7suessw7cr9j\nfrom: a\nto: b\nkind: gossip\nsummary: s\ntimestamp: 2026-01-01T00:00:00Z\n---\n',
      ),
    ).toThrow(BadMessageError);
  });

  it('refuses files that are not YAML-frontmatter messages, without evaluating anything', () => {
    const g = globalThis as { __pwned?: boolean };
    expect(() => parseMessage('---js\n{ id: (globalThis.__pwned = true) }\n---\nbody')).toThrow(BadMessageError);
    expect(g.__pwned).toBeUndefined();
    expect(() => parseMessage('just some text')).toThrow(/does not start/);
    expect(() => parseMessage('---\n: : [unclosed\n---\n')).toThrow(/invalid YAML/);
    expect(() => parseMessage('---\nid: 0mwrhkm7suessw7cr9j\n---\n')).toThrow(/invalid field/);
  });

  it('accepts a bare (unquoted) timestamp, which YAML reads as a date', () => {
    const m = parseMessage(
      '---\nid: 0mwrhkm7suessw7cr9j\nfrom: human\nto: human\nkind: message\nsummary: s\ntimestamp: 2026-11-22T10:00:00.000Z\n---\nb',
    );
    expect(m.timestamp).toBe('2026-11-22T10:00:00.000Z');
  });

  it('parses every example in inbox/examples', () => {
    const files = readdirSync(INBOX_DIR + 'examples')
      .filter((f) => f.endsWith('.md'))
      .sort();
    expect(files).toEqual(['approval-request.md', 'broadcast.md', 'completion.md', 'message.md', 'urgent.md']);
    const kinds = files.map((f) => {
      const m = parseMessage(readFileSync(INBOX_DIR + 'examples/' + f, 'utf8'));
      expect(m.body.length).toBeGreaterThan(0);
      return [m.kind, m.priority, m.broadcast_id ?? null];
    });
    expect(kinds).toEqual([
      ['approval_request', 'high', null],
      ['message', 'high', '0mwrhp2k0f4w8c2n6yd'],
      ['completion', 'normal', null],
      ['message', 'normal', null],
      ['message', 'urgent', null],
    ]);
  });

  it('inbox/message.schema.json is generated from the zod schema (regenerate: node dist/inbox/schema-json.js)', () => {
    const committed = readFileSync(INBOX_DIR + 'message.schema.json', 'utf8');
    expect(committed).toBe(messageJsonSchema());
    const schema = JSON.parse(committed) as {
      oneOf: { properties: { kind: { const: string } }; required: string[] }[];
    };
    expect(schema.oneOf.map((s) => s.properties.kind.const)).toEqual([
      'message',
      'system',
      'completion',
      'approval_request',
      'secret_request',
    ]);
    expect(schema.oneOf[2]!.required).toEqual(
      expect.arrayContaining(['status', 'exit_reason', 'turns', 'usage', 'output_path']),
    );
  });

  it('headerOf drops the body', () => {
    const m = composeMessage({ from: 'human', to: 'human', kind: 'message', summary: 'short', body: 'secret body' });
    expect(m.body).toBe('secret body');
    expect(JSON.stringify(headerOf(m))).not.toContain('secret body');
  });
});
