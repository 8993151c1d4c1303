import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { glob } from 'tinyglobby';
import { describe, expect, it } from 'vitest';
import { UNIT_TESTS } from '../../vitest.config.js';

// What puts a test file in the integration tier: a tmux server, the built CLI, a harness,
// or a crowd of fixture processes. A unit file (by its name or folder, vitest.config.ts) must use none of them.
const INTEGRATION_MARKS = [
  /\btmuxServer\(/,
  /\bflotilla\(/,
  /\bSPAWN_AGENT\b/,
  /helpers\/cli\.js/,
  /\brunHarness\b/,
  /\bstartAgent\b/,
  /\bspawnAgent\b/,
  /\bstartFixture\(/,
];

const repo = resolve(import.meta.dirname, '..', '..');

describe('test tiers', () => {
  it('the unit tier (npm run test:fast) uses no tmux, CLI, harness or fixture crowd', async () => {
    const files = await glob(UNIT_TESTS, { cwd: repo });
    expect(files.length).toBeGreaterThan(40);
    const heavy = files
      // These two name the marks (and long functions) as words; they run none of them.
      .filter((file) => !file.endsWith('shape/tiers.test.ts') && !file.endsWith('shape/file-size.test.ts'))
      .flatMap((file) => {
        const text = readFileSync(resolve(repo, file), 'utf8');
        return INTEGRATION_MARKS.filter((mark) => mark.test(text)).map((mark) => `${file}: ${mark.source}`);
      });
    expect(heavy).toEqual([]);
  });

  it('every rule of the unit tier picks up test files', async () => {
    const missing: string[] = [];
    for (const pattern of UNIT_TESTS) if ((await glob(pattern, { cwd: repo })).length === 0) missing.push(pattern);
    expect(missing).toEqual([]);
  });
});
