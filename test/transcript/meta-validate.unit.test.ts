import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { transcriptMetaSchema } from '../../src/transcript/meta-schema.js';
import { parseTranscriptMeta } from '../../src/transcript/meta-validate.generated.js';
// @ts-expect-error a plain .mjs build tool without types
import { generateValidator, TARGETS } from '../../tools/gen-validators.mjs';
import { rng } from '../helpers/seeded.js';

/** `spawn` and `gc` read sidecars with a validator generated from the zod schema. */

const repo = (p: string): string => fileURLToPath(new URL(`../../${p}`, import.meta.url));

const BASE = {
  agent_id: 'worker-7k2m9q',
  agent_name: 'worker',
  def_name: 'worker',
  status: 'completed',
  exit_reason: null,
  started_at: '2026-11-22T10:00:00.000Z',
  finished_at: '2026-11-22T10:05:00.000Z',
  resumed_from: null,
  turns_used: 4,
  model: 'script:x',
  usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.01 },
  collected_at: null,
};
const POOL: unknown[] = [
  undefined,
  null,
  '',
  'x',
  0,
  3,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  [],
  {},
  'completed',
  'working',
  'sleeping',
  { inputTokens: 1 },
  { inputTokens: -1, outputTokens: 0 },
  { inputTokens: 1, outputTokens: 2, costUsd: null, extra: 1 },
  { costUsd: -1 },
];

function* cases(count: number): Generator<unknown> {
  const r = rng(15);
  const keys = [...Object.keys(BASE), 'extra'];
  for (let i = 0; i < count; i++) {
    const m: Record<string, unknown> = structuredClone(BASE);
    const changes = Math.floor(r() * 3);
    for (let c = 0; c < changes; c++) {
      const key = keys[Math.floor(r() * keys.length)]!;
      const value = POOL[Math.floor(r() * POOL.length)];
      if (value === undefined) delete m[key];
      else m[key] = structuredClone(value);
    }
    yield i % 97 === 0 ? POOL[i % POOL.length] : m;
  }
}

describe('transcript sidecar validator generated from the zod schema', () => {
  it('the checked-in file is what the schema generates now (npm run build && node tools/gen-validators.mjs)', () => {
    const target = (TARGETS as string[][]).find((t) => t[3] === 'parseTranscriptMeta')!;
    const [mod, , out, fnName, typeName, testFile] = target as [string, string, string, string, string, string];
    expect(readFileSync(repo(out), 'utf8')).toBe(
      generateValidator(transcriptMetaSchema, fnName, typeName, mod, testFile),
    );
  });

  it('agrees with zod on 5,000 generated sidecars (verdict, data with defaults filled, fields blamed)', () => {
    const wrong: string[] = [];
    let valid = 0;
    for (const input of cases(5_000)) {
      const ours = parseTranscriptMeta(structuredClone(input));
      const zods = transcriptMetaSchema.safeParse(structuredClone(input));
      let same = ours.success === zods.success;
      if (same && ours.success && zods.success) {
        valid++;
        same = isDeepStrictEqual(JSON.parse(JSON.stringify(ours.data)), JSON.parse(JSON.stringify(zods.data)));
      } else if (same && !ours.success && !zods.success) {
        same = isDeepStrictEqual(
          [...new Set(ours.error.issues.map((i) => i.path))].sort(),
          [...new Set(zods.error.issues.map((i) => i.path.join('.')))].sort(),
        );
      }
      if (!same) wrong.push(JSON.stringify({ input, ours }));
    }
    expect(wrong.slice(0, 3)).toEqual([]);
    expect(valid).toBeGreaterThan(500);
    expect(valid).toBeLessThan(4_500);
  });
});
