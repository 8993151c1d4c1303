import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { loadDirectory } from '../../src/definitions/load.js';
import { resolveTools } from '../../src/policy/tool-policy.js';

/** The shared fixtures (also used by harness and spawn tests) load as documented. */
const DIR = fileURLToPath(new URL('../fixtures/definitions', import.meta.url));

describe('test/fixtures/definitions', () => {
  it('all load, with the expected policy', async () => {
    const r = await loadDirectory(DIR, 'project', defaultConfig());
    expect(r.errors).toEqual([]);
    const by = Object.fromEntries(r.definitions.map((d) => [d.name, d]));
    expect(Object.keys(by).sort()).toEqual(['claude-style', 'deployer', 'legacy-toml', 'reviewer']);
    expect(resolveTools(by.reviewer!.tools).tools).toEqual(['read', 'glob', 'grep']);
    expect(by.reviewer).toMatchObject({ permissionMode: 'plan', maxTurns: 8, model: 'inherit' });
    expect(resolveTools(by.deployer!.tools).tools).not.toContain('spawn_agent');
    expect(by.deployer).toMatchObject({ permissionMode: 'accept_edits', secrets: ['NPM_TOKEN'], timeoutSecs: 300 });
    expect(by.deployer!.hooks.PreToolUse[0]!.hooks[0]).toEqual({
      type: 'command',
      command: 'echo pre >> hooks.log',
      timeout_secs: 30,
      fail_closed: true,
    });
    expect(resolveTools(by['legacy-toml']!.tools).tools).toEqual(['shell', 'read']);
    expect(by['claude-style']).toMatchObject({
      permissionMode: 'accept_edits',
      color: 'purple',
      description: "Use when: checking that Claude Code files with unquoted colons load. Triggers on: 'x', 'y'.",
    });
    expect(r.warnings.map((w) => `${w.path.split('/').pop()} ${w.field}`).sort()).toEqual([
      'claude-style.md frontmatter',
      'claude-style.md tools',
      'claude-style.md tools',
      'legacy-toml.md frontmatter',
    ]);
  });
});
