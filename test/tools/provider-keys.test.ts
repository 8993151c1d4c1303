import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

/**
 * docs/security-shell.md "Keys on request only": the model provider keys the harness holds (the
 * built-in providers' and every configured api_key_env) never reach a tool command unless the
 * definition lists them in `permissions.env`; other variables pass as before.
 */
const KEYS = {
  OPENAI_API_KEY: 'sk-openai-test-1',
  ANTHROPIC_API_KEY: 'sk-ant-test-2',
  GEMINI_API_KEY: 'gem-test-3',
  MY_LLM_KEY: 'custom-test-4',
  ORDINARY_VAR: 'ordinary-5',
};
const SHOW =
  'for v in OPENAI_API_KEY ANTHROPIC_API_KEY GEMINI_API_KEY MY_LLM_KEY ORDINARY_VAR; do eval "echo $v=\\${$v:-unset}"; done | tr "\\n" " "';

// Both modes: `none` is a person's own choice, where the command's environment is the only guard.
describe.each([
  { mode: 'none', config: 'security:\n  sandbox: none\n' },
  { mode: 'bubblewrap', config: 'security:\n  sandbox: bubblewrap\n' },
])('provider keys in tool commands ($mode)', ({ config }) => {
  it('a command sees no provider key unless its definition lists it in permissions.env', async () => {
    f = spawnFleet({
      config,
      definitions: { plain: 'run-prompt.yaml' },
    });
    // A configured provider: its api_key_env is a provider key too.
    writeFileSync(
      f.layout.configFile,
      readFileSync(f.layout.configFile, 'utf8').replace(
        'models:\n',
        'models:\n  providers:\n    custom:\n      base_url: http://127.0.0.1:9/v1\n      api_key_env: MY_LLM_KEY\n',
      ),
    );
    writeFileSync(
      join(f.layout.agentsDir, 'keyed.md'),
      `---\nname: keyed\ndescription: needs one key\nmodel: script:${fixture('run-prompt.yaml')}\npermissions:\n  env: [MY_LLM_KEY]\n---\nYou are keyed.\n`,
    );

    const plain = await f.spawnAgent(['--wait', '--agent', 'plain', SHOW], KEYS);
    expect(plain.exitCode).toBe(0);
    expect(plain.stdout).toContain(
      'OPENAI_API_KEY=unset ANTHROPIC_API_KEY=unset GEMINI_API_KEY=unset MY_LLM_KEY=unset ORDINARY_VAR=ordinary-5',
    );

    const keyed = await f.spawnAgent(['--wait', '--agent', 'keyed', SHOW], KEYS);
    expect(keyed.exitCode).toBe(0);
    expect(keyed.stdout).toContain(
      'OPENAI_API_KEY=unset ANTHROPIC_API_KEY=unset GEMINI_API_KEY=unset MY_LLM_KEY=custom-test-4 ORDINARY_VAR=ordinary-5',
    );
  }, 240_000);
});
