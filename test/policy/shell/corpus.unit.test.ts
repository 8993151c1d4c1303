import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DENY_COMMANDS } from '../../../src/config/schema.js';
import { loadShellParser } from '../../../src/harness/shell-parser.js';
import { createShellClassifier, type ShellClassifier } from '../../../src/policy/shell/classify.js';
import { EVASIONS, ORDINARY, ORDINARY_OPAQUE } from './corpus.js';

let classify: ShellClassifier;
beforeAll(async () => {
  classify = createShellClassifier(await loadShellParser(), [...DEFAULT_DENY_COMMANDS]);
});

describe('the corpus is large', () => {
  it('≥150 evasions and ≥200 ordinary commands', () => {
    expect(Object.values(EVASIONS).flat().length).toBeGreaterThanOrEqual(150);
    expect(ORDINARY.length + ORDINARY_OPAQUE.length).toBeGreaterThanOrEqual(200);
  });
});

describe.each(Object.entries(EVASIONS))('evasions — %s: deny or opaque, never plain', (_family, commands) => {
  it.each(commands.map((c) => [c]))('%j', (command) => {
    const v = classify(command);
    expect(v.verdict, JSON.stringify(v)).not.toBe('plain');
  });
});

describe('ordinary work is plain', () => {
  it.each(ORDINARY.map((c) => [c]))('%j', (command) => {
    expect(classify(command)).toEqual({ verdict: 'plain' });
  });
});

describe('ordinary commands that run text as code are opaque, never denied', () => {
  it.each(ORDINARY_OPAQUE.map((c) => [c]))('%j', (command) => {
    expect(classify(command).verdict).toBe('opaque');
  });
});
