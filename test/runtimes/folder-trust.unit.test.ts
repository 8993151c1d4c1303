import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trustFolder } from '../../src/config/trust-store.js';
import { cliFolderTrusted, untrustedFolderSettings } from '../../src/harness/cli-host/folder-trust.js';
import { claude } from '../../src/runtimes/claude.js';
import { codex } from '../../src/runtimes/codex.js';
import { gemini } from '../../src/runtimes/gemini.js';
import { bubblewrapArgv, bubblewrapUserNamespace, findBubblewrap } from '../../src/tools/sandbox.js';
import { tempDir } from '../helpers/fleet.js';
import { ALL_TOOLS, launchInput } from './launch-input.js';

/**
 * What each runtime is told about its folder, trusted or not (docs/security-trust.md, "Vendor CLIs and folder trust");
 * the CLIs themselves: folder-trust.test.ts.
 */
const POLICY = { tools: ALL_TOOLS, permissionMode: 'dont_ask' } as const;
const file = (l: ReturnType<typeof claude.launch>, path: string) => l.files.find((f) => f.path === path)!.content;

describe('vendor CLIs and folder trust', () => {
  const dirs: { cleanup(): void }[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.cleanup();
  });

  it("a folder counts as trusted when it is a trusted project or inside one, never a sibling that shares the name's start", () => {
    const base = tempDir('flotilla-folder-trust-');
    dirs.push(base);
    const env = { XDG_CONFIG_HOME: join(base.dir, 'xdg') };
    const project = join(base.dir, 'proj');
    for (const d of [project, join(project, 'sub'), `${project}-other`]) mkdirSync(d, { recursive: true });
    expect(cliFolderTrusted(project, env)).toBe(false);
    const root = join(project, '.flotilla');
    trustFolder({ project, root, configFile: join(root, 'config.yaml'), agentsDir: join(root, 'agents') }, env);
    expect(cliFolderTrusted(project, env)).toBe(true);
    expect(cliFolderTrusted(join(project, 'sub'), env)).toBe(true);
    expect(cliFolderTrusted(`${project}-other`, env)).toBe(false);
  });

  it('Claude Code in an untrusted folder: user settings only, its trust dialog passed without recording trust, no project MCP approval', () => {
    const l = claude.launch({ ...launchInput({}), trusted: false }, POLICY);
    expect(l.argv.join(' ')).toContain('--setting-sources user');
    expect(l.argv.join(' ')).toContain('--strict-mcp-config');
    expect(l.env.CLAUDE_CODE_SANDBOXED).toBe('1');
    expect(JSON.parse(file(l, '.claude.json')).projects['/p']).not.toHaveProperty('hasTrustDialogAccepted');
    expect(JSON.parse(file(l, 'settings.json'))).not.toHaveProperty('enableAllProjectMcpServers');
  });

  it("Claude Code in a trusted folder: its trust recorded, the folder's settings loaded, its .mcp.json answered but still kept out by --strict-mcp-config", () => {
    const l = claude.launch({ ...launchInput({}), trusted: true }, POLICY);
    expect(l.argv).not.toContain('--setting-sources');
    expect(l.argv).toContain('--strict-mcp-config');
    expect(l.env).not.toHaveProperty('CLAUDE_CODE_SANDBOXED');
    expect(JSON.parse(file(l, '.claude.json')).projects['/p']).toMatchObject({ hasTrustDialogAccepted: true });
    expect(JSON.parse(file(l, 'settings.json'))).toMatchObject({ enableAllProjectMcpServers: true });
  });

  it('Codex: the folder is "untrusted" in the agent\'s config (its .codex/ config and hooks off) and its hooks are trusted wholesale only once the person trusted it', () => {
    const untrusted = codex.launch({ ...launchInput({}), trusted: false }, POLICY);
    expect(file(untrusted, 'config.toml')).toContain('[projects."/p"]\ntrust_level = "untrusted"');
    expect(untrusted.argv).not.toContain('--dangerously-bypass-hook-trust');
    const trusted = codex.launch({ ...launchInput({}), trusted: true }, POLICY);
    expect(file(trusted, 'config.toml')).toContain('[projects."/p"]\ntrust_level = "trusted"');
    expect(trusted.argv).toContain('--dangerously-bypass-hook-trust');
    // The screen an untrusted folder opens at is answered "Open restricted", never one that offers trust.
    expect(codex.restrictedOpen).toEqual({ shows: 'Open restricted', unless: 'Trust and continue', key: 'Enter' });
  });

  it("Gemini CLI: an untrusted folder's .env is not read and its settings wait for the folder's trust; a trusted one is trusted from Gemini's first read", () => {
    const untrusted = gemini.launch({ ...launchInput({}), trusted: false }, POLICY);
    expect(JSON.parse(file(untrusted, '.gemini/settings.json'))).toMatchObject({ advanced: { ignoreLocalEnv: true } });
    expect(untrusted.env).not.toHaveProperty('GEMINI_CLI_TRUST_WORKSPACE');
    const trusted = gemini.launch({ ...launchInput({}), trusted: true }, POLICY);
    expect(JSON.parse(file(trusted, '.gemini/settings.json'))).not.toHaveProperty('advanced');
    expect(trusted.env.GEMINI_CLI_TRUST_WORKSPACE).toBe('true');
    expect(gemini.folderSettings).toEqual(['.gemini']);
  });

  it("Gemini CLI in the sandbox: the .gemini/ of an untrusted folder and of its parents reads empty and cannot be written; the person's home's is left alone", () => {
    const base = tempDir('flotilla-gemini-folder-');
    dirs.push(base);
    const home = join(base.dir, 'home');
    const repo = join(home, 'src', 'repo');
    const cwd = join(repo, 'sub');
    for (const d of [
      join(home, '.gemini'),
      join(repo, '.gemini'),
      join(cwd, '.gemini'),
      join(repo, '-other', '.gemini'),
    ])
      mkdirSync(d, { recursive: true });
    for (const d of [repo, cwd]) writeFileSync(join(d, '.gemini', 'settings.json'), '{"hooks":{}}');
    const found = untrustedFolderSettings(gemini.folderSettings, cwd, home);
    expect(found).toEqual([join(cwd, '.gemini'), join(repo, '.gemini')]);

    const bwrap = findBubblewrap();
    const argv = bubblewrapArgv(
      {
        writable: [cwd],
        readOnly: [],
        visible: [home],
        hidden: found,
        network: false,
        bwrap,
        userNamespace: bubblewrapUserNamespace(bwrap),
      },
      [
        'sh',
        '-c',
        `ls -A ${cwd}/.gemini ${repo}/.gemini; echo '{}' > ${cwd}/.gemini/settings.json || echo refused; ls -A ${home}/.gemini && echo home-seen`,
      ],
    );
    const run = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
    expect(run.stdout).not.toContain('settings.json');
    expect(run.stdout).toContain('refused');
    expect(run.stdout).toContain('home-seen');
  });
});
