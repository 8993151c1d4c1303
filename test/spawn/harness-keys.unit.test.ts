import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { takeHarnessKeys, writeHarnessKeys } from '../../src/spawn/harness-keys.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/**
 * docs/security.md "Harnesses get their keys without tmux": the spawn's key file is 0600 in a
 * 0700 folder, holds only the keys asked for, and is gone once the harness has read it.
 */
let f: TempFleet | undefined;
afterEach(() => {
  f?.cleanup();
  f = undefined;
});

describe('the harness key file', () => {
  it('is 0600 in a 0700 folder, holds the named keys only, and is read once', () => {
    f = tempFleet();
    writeHarnessKeys(f.layout, 'k-1', { ANTHROPIC_API_KEY: 'sk-a', OPENAI_API_KEY: '', HOME: '/h' }, [
      'ANTHROPIC_API_KEY',
      'OPENAI_API_KEY',
    ]);
    const dir = f.layout.runtimeDir('k-1');
    const file = join(dir, 'harness-keys.json');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(takeHarnessKeys(f.layout, 'k-1')).toEqual({ ANTHROPIC_API_KEY: 'sk-a' });
    expect(existsSync(file)).toBe(false);
    expect(takeHarnessKeys(f.layout, 'k-1')).toEqual({});
  });
});
