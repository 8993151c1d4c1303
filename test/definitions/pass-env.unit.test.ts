import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { trustFolder } from '../../src/config/trust-store.js';
import { loadDefinitions, pickDefinition } from '../../src/definitions/load.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/**
 * `permissions.env` (docs/definitions.md, docs/security-shell.md "Keys on request only"): the
 * provider keys a definition's commands may see. End to end: test/tools/provider-keys.test.ts.
 */

let fleet: TempFleet;
let env: NodeJS.ProcessEnv;
const def = (name: string, extra: string) =>
  `---\nname: ${name}\ndescription: ${name} agent\n${extra}---\n\nYou are ${name}.\n`;

beforeEach(() => {
  fleet = tempFleet();
  const home = join(fleet.project, 'home');
  env = { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg') };
  mkdirSync(fleet.layout.agentsDir, { recursive: true });
});
afterEach(() => fleet.cleanup());

const load = async () =>
  loadDefinitions({ layout: fleet.layout, config: (await loadConfig({ layout: fleet.layout, env })).config, env });

describe('permissions.env', () => {
  it('lists variable names, once each; a trusted folder keeps them', async () => {
    writeFileSync(
      join(fleet.layout.agentsDir, 'keyed.md'),
      def('keyed', 'permissions:\n  env: [OPENAI_API_KEY, MY_KEY, MY_KEY]\n'),
    );
    trustFolder(fleet.layout, env);
    expect(pickDefinition(await load(), 'keyed').passEnv).toEqual(['OPENAI_API_KEY', 'MY_KEY']);
  });

  it('refuses anything but a list of variable names, saying what to write', async () => {
    writeFileSync(join(fleet.layout.agentsDir, 'bad.md'), def('bad', 'permissions:\n  env: OPENAI_API_KEY\n'));
    writeFileSync(join(fleet.layout.agentsDir, 'worse.md'), def('worse', "permissions:\n  env: ['$(id)']\n"));
    trustFolder(fleet.layout, env);
    const result = await load();
    expect(result.errors).toHaveLength(2);
    for (const e of result.errors)
      expect(e.message).toMatch(
        /^permissions\.env must be a list of environment variable names, got .* — e\.g\. env: \[OPENAI_API_KEY\]$/,
      );
    expect(result.definitions.map((d) => d.name)).not.toContain('bad');
    expect(result.definitions.map((d) => d.name)).not.toContain('worse');
  });

  it("an untrusted project's definition gets no keys, and says so", async () => {
    writeFileSync(join(fleet.layout.agentsDir, 'keyed.md'), def('keyed', 'permissions:\n  env: [OPENAI_API_KEY]\n'));
    const result = await load();
    expect(pickDefinition(result, 'keyed').passEnv).toBeUndefined();
    expect(result.trust.ignored.join('\n')).toContain('permissions.env OPENAI_API_KEY of');
  });
});
