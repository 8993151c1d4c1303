import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HARNESS_MALLOC_TUNABLES } from '../../src/malloc-tunables.js';
import { runtimeKeyVars } from '../../src/runtimes/login.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

/**
 * What a vendor CLI hands the commands its shell tool runs (docs/security.md "Vendor
 * runtimes"): each CLI, started by spawn-agent as a person's spawn starts it in real tmux, is
 * told by its model (the fake vendor API replaying env-probe.yaml) to run `env` and `tmux
 * list-panes`. The command has neither TMUX nor TMUX_PANE, so the fleet's tmux server (a
 * private one: nothing else answers a bare `tmux`) is out of its reach, and it holds no
 * provider key but those its own CLI authenticates with, though the spawner had them all; nor
 * the variable of a secret another definition of the fleet may request (a tmux server started
 * from a shell that exported it hands it to every window).
 */
const OTHER_KEYS: Record<string, string> = {
  ANTHROPIC_API_KEY: 'sk-ant-other-provider-key-1',
  OPENAI_API_KEY: 'sk-other-provider-key-2',
  GEMINI_API_KEY: 'other-provider-key-3',
  GOOGLE_API_KEY: 'other-provider-key-4',
  MY_PROVIDER_KEY: 'configured-provider-key-5',
};
const DEPLOY_TOKEN = 'dk-exported-in-the-tmux-environment-6';
// A person's extra certificate authorities (a proxy's), as a corporate shell exports them.
const EXTRA_CA = fileURLToPath(new URL('../fixtures/tls/extra-ca.pem', import.meta.url));

const fleets = vendorFleets();

describe("a vendor CLI's commands get no tmux and no other provider's key", { timeout: 600_000 }, () => {
  it.each(RUNTIMES)('%s', async (name) => {
    const t = TARGETS[name]();
    // The target's own key wins over the stand-in of the same name.
    // Without the sandbox, where the environment is all that keeps tmux from the command
    // (test/runtimes/sandboxed-cli.test.ts has the sandbox).
    const f = await fleets.open({
      ...t,
      env: (url) => ({ ...OTHER_KEYS, DEPLOY_TOKEN, NODE_EXTRA_CA_CERTS: EXTRA_CA, ...t.env(url) }),
      script: 'env-probe.yaml',
      config: 'security:\n  sandbox: none\n',
      definitions: {
        a: DONT_ASK,
        deployer: `${DONT_ASK}  secrets: [deploy-token]\n`,
      },
    });
    // A configured provider's api_key_env is a provider key too.
    const config = readFileSync(f.layout.configFile, 'utf8');
    writeFileSync(
      f.layout.configFile,
      config.replace(
        'models:\n',
        'models:\n  providers:\n    mine: {base_url: "http://127.0.0.1:9/v1", api_key_env: MY_PROVIDER_KEY}\n',
      ),
    );
    const id = await f.spawnChild('a', `${name}-env`, 'look around', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the completion');
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toMatch(/Final answer: .*probed/);

    const env = readFileSync(join(f.project, 'probe-env.txt'), 'utf8').split('\n');
    const names = env.map((l) => l.split('=')[0]);
    // It is the agent's command (the agent's identity is there), without tmux's.
    expect(env).toContain(`FLOTILLA_AGENT_ID=${id}`);
    expect(names).not.toContain('TMUX');
    expect(names).not.toContain('TMUX_PANE');
    // Its own CLI's credentials (Gemini CLI's are GEMINI_API_KEY and GOOGLE_API_KEY) stay: the CLI is their model
    // client.
    const own = runtimeKeyVars(name);
    for (const [k, v] of Object.entries(OTHER_KEYS)) {
      if (own.includes(k)) continue;
      expect(env.join('\n'), k).not.toContain(v);
    }
    // The CLI and its commands trust what the person's shell told Node to; the shim, which makes no TLS connection of
    // its own, started without reading them (~60 ms of a Node start: src/extra-ca-certs.ts).
    expect(env).toContain(`NODE_EXTRA_CA_CERTS=${EXTRA_CA}`);
    expect(names).not.toContain('FLOTILLA_EXTRA_CA_CERTS');
    const shimEnv = readFileSync(`/proc/${f.record(id).pid}/environ`, 'utf8').split('\0');
    expect(shimEnv.filter((l) => l.includes('EXTRA_CA_CERTS'))).toEqual([`FLOTILLA_EXTRA_CA_CERTS=${EXTRA_CA}`]);
    // The shim started with glibc's malloc told to give memory back; the CLI and its commands run with glibc's
    // defaults (src/malloc-tunables.ts). glibc cuts the string at its first ':' where it lies as it reads it.
    expect(shimEnv).toContain(`GLIBC_TUNABLES=${HARNESS_MALLOC_TUNABLES.split(':')[0]!}`);
    expect(names).not.toContain('GLIBC_TUNABLES');
    // Another definition's secret reaches a command only through a grant to that agent.
    expect(names).not.toContain('DEPLOY_TOKEN');
    // Its pane does run in tmux, and a bare tmux finds no server from the command.
    expect(await f.windows()).toContain(id);
    expect(readFileSync(join(f.project, 'probe-tmux.txt'), 'utf8')).not.toMatch(/status:0/);
  });
});
