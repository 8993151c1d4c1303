import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { loadDefinitions } from '../../src/definitions/load.js';
import { resolveTools } from '../../src/policy/tool-policy.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/**
 * Definitions written for OpenCode, Gemini CLI and Claude Code agent teams (our own sample
 * files in test/fixtures/definitions/foreign) load with the tools they meant: a deny stays a
 * deny, an allow list never widens, and a shape the loader does not understand is an error.
 */
const FOREIGN = fileURLToPath(new URL('../fixtures/definitions/foreign/', import.meta.url));

let fleet: TempFleet;
beforeEach(() => {
  fleet = tempFleet();
  cpSync(FOREIGN, fleet.layout.agentsDir, { recursive: true });
});
afterEach(() => fleet.cleanup());

function loaded() {
  const home = join(fleet.project, 'home');
  return loadDefinitions({
    layout: fleet.layout,
    config: defaultConfig(),
    env: { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg') },
  });
}
const toolsOf = async (name: string): Promise<string[]> => {
  const result = await loaded();
  const def = result.definitions.find((d) => d.name === name);
  if (!def) throw new Error(`${name} did not load: ${JSON.stringify(result.errors)}`);
  return resolveTools(def.tools).tools;
};

describe('definitions written for other tools fail closed', async () => {
  it('OpenCode {name: false} denies those tools; {"*": false, name: true} allows only the true ones', async () => {
    const reviewer = await toolsOf('opencode-reviewer');
    expect(reviewer).not.toEqual(expect.arrayContaining(['write']));
    for (const t of ['write', 'edit', 'shell']) expect(reviewer).not.toContain(t);
    expect(reviewer).toEqual(expect.arrayContaining(['read', 'grep', 'glob', 'send_message']));
    expect(await toolsOf('opencode-readonly')).toEqual(['read', 'grep']);
  });

  it('Gemini CLI tool names map onto ours; an unknown one (web_fetch) is granted nothing', async () => {
    expect(await toolsOf('codebase-investigator')).toEqual(['shell', 'read', 'glob', 'grep']);
    expect(await toolsOf('gemini-editor')).toEqual(['read', 'write', 'edit']);
  });

  it('Claude Code team names map: Agent → spawn_agent, SendMessage → send_message; disallowedTools wins over Bash(…)', async () => {
    expect(await toolsOf('team-lead')).toEqual(['read', 'grep', 'send_message', 'spawn_agent']);
    expect(await toolsOf('team-member')).toEqual(['read', 'edit', 'send_message']);
  });

  it('a tools value of a shape the loader does not understand is an error naming the field, not every tool', async () => {
    const { definitions, errors } = await loaded();
    expect(definitions.map((d) => d.name)).not.toContain('bad-shape');
    expect(definitions.map((d) => d.name)).not.toContain('bad-key');
    const messages = errors.map((e) => `${e.path}: ${e.message}`).join('\n');
    expect(messages).toMatch(/bad-shape\.md: .*tools\.write is not understood/);
    expect(messages).toMatch(/bad-key\.md: .*tools\.disable is not understood/);
  });
});
