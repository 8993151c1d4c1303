import type { Layout } from '../layout/layout.js';

/**
 * Before `up` or a spawn started by a person (docs/security-trust.md "Folder trust"): in a folder
 * whose files are not trusted yet, say what those files would set and — on a terminal — ask
 * once whether to trust it. Without a terminal, or on "no", the spawn goes on untrusted and
 * one line says what was ignored. Commands an agent runs never ask and never print it: they
 * are not the person, and the agent's model would only read it as a hint.
 */
export async function settleTrust(layout: Layout, io: TrustIo = processIo()): Promise<void> {
  if (io.env.FLOTILLA_AGENT_ID) return;
  // An agent's command with its identity stripped (env -i, setsid) is still an agent's: found by its ancestors.
  const { findParentAgent } = await import('../fleet/lineage.js');
  if (findParentAgent(layout).parent) return;
  const { isTrusted } = await import('../config/trust-store.js');
  if (isTrusted(layout, io.env)) return;
  const ignored = await untrustedIgnores(layout, io.env);
  if (!ignored.length) return;
  if (io.canAsk) {
    io.write(`flotilla: this folder (${layout.project}) is not trusted yet. Its own files would set:\n`);
    for (const item of ignored) io.write(`  - ${item}\n`);
    const answer = await io.ask('Trust this folder and use them? [y/N] ');
    if (/^\s*y(es)?\s*$/i.test(answer)) {
      const { trustFolder } = await import('../config/trust-store.js');
      trustFolder(layout, io.env);
      io.write(`flotilla: trusted ${layout.project} (undo with 'flotilla trust --revoke')\n`);
      return;
    }
  }
  io.write(trustNotice(ignored) + '\n');
}

/** The one line that says what an untrusted folder's files did not get to do. */
export function trustNotice(ignored: string[]): string {
  return `flotilla: this folder is not trusted, so these were ignored: ${ignored.join('; ')} — run 'flotilla trust' to use them`;
}

/** What the project's files set that only trust allows, as short phrases. */
export async function untrustedIgnores(layout: Layout, env: NodeJS.ProcessEnv): Promise<string[]> {
  const [{ loadConfig }, { loadDefinitions }, { skippedProjectClis }] = await Promise.all([
    import('../config/load.js'),
    import('../definitions/load.js'),
    import('../runtimes/index.js'),
  ]);
  const loaded = await loadConfig({ layout, env, trusted: false });
  const defs = await loadDefinitions({ layout, config: loaded.config, env, trusted: false });
  const clis = await skippedProjectClis(layout.project, env, loaded.config.runtimes);
  return [...loaded.trust.ignored.map((k) => `${k} in ${layout.configFile}`), ...defs.trust.ignored, ...clis];
}

export interface TrustIo {
  env: NodeJS.ProcessEnv;
  canAsk: boolean;
  write(text: string): void;
  ask(question: string): Promise<string>;
}

function processIo(): TrustIo {
  return {
    env: process.env,
    // Asked only when the folder is untrusted: `process.stdin`'s first touch makes its stream, ~5 ms of every spawn's
    // CPU (§14) that an agent's spawn or a trusted folder never needs.
    get canAsk() {
      return !!process.stdin.isTTY && !!process.stderr.isTTY;
    },
    write: (text) => void process.stderr.write(text),
    ask: async (question) => (await import('./ask.js')).ask(question),
  };
}
