import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectedProbe, HIDDEN_PATHS_CONFIG, probeResults, seedCredentials } from '../helpers/credentials.js';
import { spawnFleet, type SpawnFleet } from './helpers.js';

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

/**
 * The person's credentials out of an agent's shell (docs/security.md, "Credentials
 * hidden"): a real harness with `security.sandbox: bubblewrap` in `dont_ask`, whose scripted
 * model runs probe.sh (test/helpers/credentials.ts) in its shell. Every credential folder
 * and file of the home, every coding CLI's login and what the person's `hidden_paths` names
 * read as empty; the rest of the home does not.
 */
describe("an agent's shell in the sandbox", () => {
  it('reads none of the credentials in the home, and the home otherwise', async () => {
    f = spawnFleet({ config: 'security:\n  sandbox: bubblewrap\n', definitions: { prober: 'run-prompt.yaml' } });
    seedCredentials(f.env.HOME!, f.project);
    // The person's own config: hidden_paths is theirs alone to set.
    writeFileSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml'), HIDDEN_PATHS_CONFIG);
    const r = await f.spawnAgent(['--wait', '--agent', 'prober', '--id', 'pr', 'sh probe.sh']);
    expect(r.stdout).toContain('probed');
    expect(probeResults(readFileSync(join(f.project, 'probe.txt'), 'utf8'))).toEqual(expectedProbe());
  });
});
