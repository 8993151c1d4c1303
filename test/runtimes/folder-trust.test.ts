import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellCommand } from '../../src/tmux/quote.js';
import { CLI } from '../helpers/cli.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { type VendorFleet } from './helpers.js';
import { TARGETS } from './targets.js';
import { RUNTIMES, vendorFleets } from './vendor-suite.js';

/**
 * A cloned repository's own vendor-CLI settings (docs/security-trust.md, "Vendor CLIs and folder
 * trust"): each CLI's project files name a hook and an MCP server, each of which would leave a
 * marker file in the project when run. Before `flotilla trust` the pinned CLI, spawned as a
 * person spawns it, runs none of them and still answers; after `flotilla trust` a new agent in
 * the same folder runs what the table below says, and answers too.
 */
type Name = 'claude' | 'codex' | 'gemini';

/** The repository's files for each CLI, each command touching `<project>/marker-<what>`. */
function repoFiles(name: Name, project: string): Record<string, string> {
  const touch = (what: string) => `touch ${join(project, `marker-${what}`)}`;
  const mcp = { command: 'sh', args: ['-c', `${touch('mcp')}; exec sleep 600`] };
  switch (name) {
    case 'claude':
      return {
        '.claude/settings.json': JSON.stringify({
          hooks: {
            SessionStart: [{ hooks: [{ type: 'command', command: touch('session-start') }] }],
            UserPromptSubmit: [{ hooks: [{ type: 'command', command: touch('prompt-submit') }] }],
          },
        }),
        '.mcp.json': JSON.stringify({ mcpServers: { repo: mcp } }),
      };
    case 'codex':
      return {
        '.codex/config.toml': `[mcp_servers.repo]\ncommand = "sh"\nargs = ${JSON.stringify(mcp.args)}\n`,
        '.codex/hooks.json': JSON.stringify({
          hooks: {
            SessionStart: [{ hooks: [{ type: 'command', command: touch('session-start') }] }],
            UserPromptSubmit: [{ hooks: [{ type: 'command', command: touch('prompt-submit') }] }],
          },
        }),
      };
    case 'gemini':
      return {
        '.gemini/settings.json': JSON.stringify({
          hooks: {
            SessionStart: [{ hooks: [{ type: 'command', command: touch('session-start') }] }],
            BeforeAgent: [{ hooks: [{ type: 'command', command: touch('prompt-submit') }] }],
          },
          tools: { discoveryCommand: `sh -c "${touch('discovery')}; echo []"` },
          mcpServers: { repo: mcp },
        }),
        // Read into Gemini's own environment in a trusted folder: BASH_ENV runs before every hook's `bash -c`.
        '.env': `BASH_ENV=${join(project, 'env.sh')}\n`,
        'env.sh': `${touch('env')}\n`,
      };
  }
}

/** What runs once the person trusted the folder. */
const AFTER_TRUST: Record<Name, string[]> = {
  // The folder's settings are Claude's to load (its hooks run); its .mcp.json never is (--strict-mcp-config).
  claude: ['marker-prompt-submit', 'marker-session-start'],
  // The folder's .codex/config.toml and hooks load as for the person (hooks trusted: --dangerously-bypass-hook-trust).
  codex: ['marker-mcp', 'marker-prompt-submit', 'marker-session-start'],
  // The folder's .gemini/settings.json loads (hooks, tool discovery) and its .env; its MCP
  // servers never do (--allowed-mcp-server-names flotilla). Untrusted, .gemini/ is hidden in
  // the sandbox (outside one the CLI is not started) and .env is not read (ignoreLocalEnv).
  gemini: ['marker-discovery', 'marker-env', 'marker-prompt-submit', 'marker-session-start'],
};

/**
 * `flotilla <args>` as the person runs it: from a shell of the fleet's tmux server. This test
 * process is the registered parent agent, and `flotilla trust` refuses any agent's descendant.
 */
async function asPerson(f: VendorFleet, args: string[]): Promise<string> {
  const env = Object.entries(f.env).map(([k, v]) => `${k}=${v}`);
  // The person's own session, before any agent's.
  if (!(await f.windows()).includes('person'))
    await f.tmux.tmux('new-session', '-d', '-s', 'person', '-n', 'person', '-c', f.project, 'sleep 3600');
  const out = join(f.home, 'person-command.out');
  await f.tmux.tmux(
    'run-shell',
    `cd ${shellCommand([f.project])} && ${shellCommand(['env', '-i', ...env, process.execPath, CLI, ...args])} >${shellCommand([out])} 2>&1`,
  );
  return readFileSync(out, 'utf8');
}

const fleets = vendorFleets();

describe(
  "a repository's own vendor-CLI hooks and MCP servers run nothing before flotilla trust",
  { timeout: 900_000 },
  () => {
    it.each(RUNTIMES)('%s', async (name) => {
      const t = TARGETS[name]();
      const f = await fleets.open({ ...t, script: 'first.yaml', definitions: { a: '' } });
      for (const [path, text] of Object.entries(repoFiles(name, f.project))) {
        mkdirSync(dirname(join(f.project, path)), { recursive: true });
        writeFileSync(join(f.project, path), text);
      }
      const markers = () =>
        ['session-start', 'prompt-submit', 'mcp', 'discovery', 'env']
          .map((m) => `marker-${m}`)
          .filter((m) => existsSync(join(f.project, m)))
          .sort();
      const answer = async (id: string) => {
        await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, `${id}'s completion`);
        return completionsFrom(f, 'lead-parent', id)[0]!.body;
      };

      // A stranger's repository: the test fleet's helpers trusted it, as a person would not have.
      expect(await asPerson(f, ['trust', '--revoke', f.project])).toContain('no longer trusted');
      const before = await f.spawnChild('a', `${name}-untrusted`, 'summarize', t.spawnArgs);
      expect(await answer(before)).toMatch(/Final answer: the first request arrived/);
      expect(markers()).toEqual([]);

      expect(await asPerson(f, ['trust', f.project])).toMatch(/^trusted /);
      const after = await f.spawnChild('a', `${name}-trusted`, 'summarize', t.spawnArgs);
      expect(await answer(after)).toMatch(/Final answer: the first request arrived/);
      expect(markers()).toEqual(AFTER_TRUST[name]);
    });
  },
);

describe('Gemini CLI outside a sandbox', { timeout: 900_000 }, () => {
  it('is not started in an untrusted folder that has a .gemini, and says so in one line; trusted, it answers', async () => {
    const t = TARGETS.gemini();
    // The person's own choice of no sandbox (an untrusted project cannot set security:).
    const f = await fleets.open({
      ...t,
      env: (url) => ({ ...t.env(url), FLOTILLA_SECURITY_SANDBOX: 'none' }),
      script: 'first.yaml',
      definitions: { a: '' },
    });
    for (const [path, text] of Object.entries(repoFiles('gemini', f.project))) {
      mkdirSync(dirname(join(f.project, path)), { recursive: true });
      writeFileSync(join(f.project, path), text);
    }
    const completion = async (id: string) => {
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, `${id}'s completion`);
      return completionsFrom(f, 'lead-parent', id)[0]!.body;
    };
    expect(await asPerson(f, ['trust', '--revoke', f.project])).toContain('no longer trusted');
    const refused = await f.spawnChild('a', 'gemini-unsandboxed', 'summarize', t.spawnArgs);
    expect(await completion(refused)).toContain(
      `Gemini CLI would load ${join(f.project, '.gemini')} (this untrusted folder's own hooks and commands) and no sandbox hides it: 'flotilla trust' the project`,
    );
    expect(existsSync(join(f.project, 'marker-session-start'))).toBe(false);

    expect(await asPerson(f, ['trust', f.project])).toMatch(/^trusted /);
    const after = await f.spawnChild('a', 'gemini-unsandboxed-trusted', 'summarize', t.spawnArgs);
    expect(await completion(after)).toMatch(/Final answer: the first request arrived/);
  });
});
