import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectedProbe, HIDDEN_PATHS_CONFIG, probeResults, seedCredentials } from '../helpers/credentials.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

const fleets = vendorFleets();

/** Each CLI's own login, which it alone of the three sees (it needs it to reach its model). */
const OWN = { claude: ['claude', 'claude-json'], codex: ['codex'], gemini: ['gemini'] } as const;

/**
 * The person's credentials out of a vendor CLI's reach (docs/security.md, "Credentials
 * hidden"): each CLI, sandboxed in `dont_ask` with `security.sandbox: bubblewrap`, is
 * told by its model (the fake vendor API replaying credentials-probe.yaml) to run probe.sh
 * with its own shell tool. Every credential of the home, the other CLIs' logins and what the
 * person's `hidden_paths` names read as empty; its own login and the rest of the home do not.
 */
describe("a vendor CLI's shell tool in the sandbox", { timeout: 600_000 }, () => {
  it.each(RUNTIMES)('%s reads no credential but its own login', async (name) => {
    const t = TARGETS[name]();
    const f = await fleets.open({
      ...t,
      script: 'credentials-probe.yaml',
      config: 'security:\n  sandbox: bubblewrap\n',
      definitions: { a: DONT_ASK },
    });
    seedCredentials(f.home, f.project);
    // The person's own config: hidden_paths is theirs alone to set.
    writeFileSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml'), HIDDEN_PATHS_CONFIG);
    const id = await f.spawnChild('a', `${name}-creds`, 'probe the home', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the completion');
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('probed');
    expect(probeResults(readFileSync(join(f.project, 'probe.txt'), 'utf8'))).toEqual(expectedProbe(OWN[name]));
  });
});
