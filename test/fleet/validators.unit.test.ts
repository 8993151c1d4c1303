import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { agentRecordSchema } from '../../src/fleet/record-schema.js';
import { parseAgentRecord } from '../../src/fleet/record-validate.generated.js';
import { recordInput } from '../helpers/records.js';
// @ts-expect-error a plain .mjs build tool without types
import { generateValidator, TARGETS } from '../../tools/gen-validators.mjs';

const repo = (p: string): string => fileURLToPath(new URL(`../../${p}`, import.meta.url));

describe('validators generated from the zod schemas', () => {
  it('the checked-in file is what the schema generates now (run tools/gen-validators.mjs after changing it)', () => {
    const [mod, , out, fnName, typeName] = (TARGETS as [string, string, string, string, string][])[0]!;
    expect(readFileSync(repo(out), 'utf8')).toBe(generateValidator(agentRecordSchema, fnName, typeName, mod));
  });

  const base = recordInput('lead-aaaaaa', {
    status: 'working',
    pid: 42,
    pidStartTime: '7',
    tmux: { socket: null, sessionId: '$1', windowId: '@2', paneId: '%3' },
    usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.01 },
    lastTask: { task: 1, status: 'completed', exitReason: null, finishedAt: 'x', outputPath: null },
  }) as Record<string, unknown>;
  const { version: _v, task: _t, lastTask: _l, slot: _s, collectedAt: _c, ...withoutDefaults } = base;
  const cases: [string, unknown][] = [
    ['a full record', base],
    ['defaults left out', withoutDefaults],
    [
      'unknown keys (stripped)',
      { ...base, extra: 1, usage: { inputTokens: 1, outputTokens: 2, costUsd: null, more: true } },
    ],
    ['usage fields defaulted', { ...base, usage: {} }],
    ['wrong type', { ...base, turns: '3' }],
    ['negative turns', { ...base, turns: -1 }],
    ['fractional turns', { ...base, turns: 1.5 }],
    ['zero maxTurns', { ...base, maxTurns: 0 }],
    ['infinite timeout', { ...base, timeoutSecs: Infinity }],
    ['NaN depth', { ...base, depth: Number.NaN }],
    ['unknown status', { ...base, status: 'sleeping' }],
    ['version 2', { ...base, version: 2 }],
    ['lastLine of 500', { ...base, lastLine: 'x'.repeat(500) }],
    ['lastLine of 501', { ...base, lastLine: 'x'.repeat(501) }],
    ['null where not nullable', { ...base, name: null }],
    ['missing field', { ...base, cwd: undefined }],
    ['bad nested tmux', { ...base, tmux: { socket: null, sessionId: 1, windowId: '@2', paneId: '%3' } }],
    ['bad array element', { ...base, effectivePolicy: { tools: ['shell', 3], permissionMode: 'default' } }],
    ['unknown permission mode', { ...base, permissionMode: 'yolo' }],
    ['unknown policy permission mode', { ...base, effectivePolicy: { tools: [], permissionMode: 'acceptEdits' } }],
    [
      'bad lastTask status',
      { ...base, lastTask: { task: 1, status: 'idle', exitReason: null, finishedAt: 'x', outputPath: null } },
    ],
    ['not an object', ['lead']],
    ['null', null],
  ];
  it.each(cases)('agrees with zod on %s', (_name, input) => {
    const ours = parseAgentRecord(structuredClone(input));
    const zods = agentRecordSchema.safeParse(structuredClone(input));
    expect(ours.success).toBe(zods.success);
    if (ours.success && zods.success) expect(ours.data).toEqual(zods.data);
  });
});
