import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { messageHeaderSchema } from '../../src/inbox/message-schema.js';
import { parseMessageHeader } from '../../src/inbox/message-validate.generated.js';
// @ts-expect-error a plain .mjs build tool without types
import { generateValidator, TARGETS } from '../../tools/gen-validators.mjs';
import { rng } from '../helpers/seeded.js';

/**
 * `flotilla send` and the inbox readers check messages with a validator generated from the zod
 * schema, so they do not load zod. zod stays the source of truth: this file fails
 * when the generated file is stale, and compares the two on thousands of generated headers.
 */

const repo = (p: string): string => fileURLToPath(new URL(`../../${p}`, import.meta.url));

const VALID: Record<string, Record<string, unknown>> = {
  message: { kind: 'message' },
  system: { kind: 'system' },
  completion: {
    kind: 'completion',
    status: 'completed',
    exit_reason: null,
    turns: 3,
    usage: { input_tokens: 10, output_tokens: 5, cost_usd: 0.01 },
    output_path: null,
  },
  approval_request: { kind: 'approval_request', request_id: '0mwrhn1c6ab12cd34ef', tool: 'shell' },
  secret_request: { kind: 'secret_request', request_id: '0mwrhn1c6ab12cd34eg', key: 'GITHUB_TOKEN', ttl_secs: 600 },
};
const COMMON = {
  id: '0mwrhkm7suessw7cr9j',
  from: 'worker-7k2m9q',
  to: 'human',
  summary: 'done',
  priority: 'high',
  timestamp: '2026-11-22T10:00:00.000Z',
  in_reply_to: '0mwrhkm7suessw7cr9k',
};

/** Values that sit on and around each field's rules: every type, the edges of every pattern and bound. */
const POOL: unknown[] = [
  undefined,
  null,
  true,
  0,
  -1,
  1,
  1.5,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  -0,
  600,
  0.001,
  '',
  ' ',
  'x',
  'human',
  'sys',
  'a1',
  '../etc',
  'lead/1',
  '-lead',
  'lead_1-x',
  'a'.repeat(64),
  'a'.repeat(65),
  'ünï',
  '0mwrhkm7',
  '0mwrhkm',
  '0mwrhkm7suessw7cr9j',
  '_mwrhkm7suessw',
  'x'.repeat(200),
  'x'.repeat(201),
  'two\nlines',
  'tab\there',
  'del\x7f',
  'esc\x1b[31m',
  'message',
  'system',
  'completion',
  'approval_request',
  'secret_request',
  'gossip',
  'MESSAGE',
  'urgent',
  'high',
  'normal',
  'low',
  'completed',
  'failed',
  'cancelled',
  'timed_out',
  'crashed',
  'refused',
  'idle',
  '2026-11-22T10:00:00.000Z',
  '2026-11-22T10:00:00Z',
  '2026-11-22T10:00:00+02:00',
  '2026-11-22T10:00:00',
  '2026-11-22 10:00:00Z',
  '2024-02-29T00:00:00Z',
  '2026-02-29T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '2026-11-22T24:00:00Z',
  '2026-11-22T10:00:00.1234567Z',
  '2026-11-22',
  '2026-11-22T10:00:60Z',
  '2026-11-22T10:60:00Z',
  '2026-11-22T10:00:00+24:00',
  'GITHUB_TOKEN',
  'my.key-1',
  '.hidden',
  '_UNDER',
  'k'.repeat(64),
  'k'.repeat(65),
  'has space',
  '/tmp/out.md',
  'r'.repeat(500),
  'r'.repeat(501),
  [],
  ['x'],
  {},
  { input_tokens: 1, output_tokens: 2 },
  { input_tokens: -1, output_tokens: 2 },
  { input_tokens: 1.5, output_tokens: 2, cost_usd: null },
  { input_tokens: 1, output_tokens: 2, cost_usd: -0.5 },
  { input_tokens: 1, output_tokens: 2, cost_usd: 0, extra: 'dropped' },
  { output_tokens: 2 },
  new Date(0),
];
const FIELDS = [
  'id',
  'from',
  'to',
  'kind',
  'summary',
  'priority',
  'timestamp',
  'in_reply_to',
  'status',
  'exit_reason',
  'turns',
  'usage',
  'output_path',
  'request_id',
  'tool',
  'key',
  'ttl_secs',
  'extra_key',
];

function generatedCases(count: number, seed: number): unknown[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const cases: unknown[] = [];
  for (let i = 0; i < count; i++) {
    if (r() < 0.03) {
      cases.push(pick(POOL));
      continue;
    }
    const kind = pick(Object.keys(VALID));
    const header: Record<string, unknown> = { ...COMMON, ...structuredClone(VALID[kind]!) };
    if (r() < 0.3) delete header.priority;
    if (r() < 0.3) delete header.in_reply_to;
    // Most cases change one to three fields; a fifth stay valid so both outcomes are well covered.
    const changes = r() < 0.2 ? 0 : 1 + Math.floor(r() * 3);
    for (let c = 0; c < changes; c++) {
      const field = pick(FIELDS);
      const value = pick(POOL);
      if (value === undefined && r() < 0.5) delete header[field];
      else header[field] = structuredClone(value);
    }
    cases.push(header);
  }
  return cases;
}

/** An optional key zod leaves absent may be present as undefined here: the same header. */
const dropUndefined = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

const paths = (issues: readonly { path: readonly PropertyKey[] | string }[]): string[] =>
  [...new Set(issues.map((i) => (typeof i.path === 'string' ? i.path : i.path.join('.'))))].sort();

describe('message validator generated from the zod schema', () => {
  it('the checked-in file is what the schema generates now (npm run build && node tools/gen-validators.mjs)', () => {
    const target = (TARGETS as string[][]).find((t) => t[3] === 'parseMessageHeader')!;
    const [mod, , out, fnName, typeName, testFile] = target as [string, string, string, string, string, string];
    expect(readFileSync(repo(out), 'utf8')).toBe(
      generateValidator(messageHeaderSchema, fnName, typeName, mod, testFile),
    );
  });

  it('agrees with zod on 20,000 generated headers: the same verdict, the same data, the same fields blamed', () => {
    let valid = 0;
    const disagreements: string[] = [];
    for (const input of generatedCases(20_000, 15)) {
      const ours = parseMessageHeader(structuredClone(input));
      const zods = messageHeaderSchema.safeParse(structuredClone(input));
      let same = ours.success === zods.success;
      if (same && ours.success && zods.success) {
        valid++;
        same = isDeepStrictEqual(dropUndefined(ours.data), dropUndefined(zods.data));
      } else if (same && !ours.success && !zods.success) {
        same = isDeepStrictEqual(paths(ours.error.issues), paths(zods.error.issues));
      }
      if (!same)
        disagreements.push(JSON.stringify({ input, ours, zod: zods.success ? zods.data : paths(zods.error.issues) }));
    }
    expect(disagreements.slice(0, 3)).toEqual([]);
    // Both verdicts are exercised in earnest, not a handful of one of them.
    expect(valid).toBeGreaterThan(2_000);
    expect(valid).toBeLessThan(18_000);
  });

  it('fills the default priority and drops unknown keys, as zod does', () => {
    const input = { ...COMMON, kind: 'message', priority: undefined, extra: 1 };
    const ours = parseMessageHeader(input);
    expect(ours).toEqual({ success: true, data: expect.not.objectContaining({ extra: 1 }) });
    expect(ours.success && ours.data.priority).toBe('normal');
  });
});
