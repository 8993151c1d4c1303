import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { listRecords } from '../../src/fleet/registry.js';
import { CLI_LOGINS, HOME_CREDENTIALS } from '../../src/tools/sandbox-credentials.js';
import { CLI } from '../helpers/cli.js';
import { CREDENTIALS, HIDDEN_PATHS_CONFIG, secretsIn, seedCredentials } from '../helpers/credentials.js';
import { tempDir } from '../helpers/fleet.js';
import { fixture, scriptCalls } from '../helpers/scripts.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { project, type Project } from '../hooks-e2e/project.js';

/**
 * What an agent's read, glob and grep may touch (docs/security.md, "What reads may touch"),
 * through a real harness running test/fixtures/harness/read-scope.yaml: a fresh HOME with a
 * fake ~/.ssh, ~/.aws and ~/.config/gcloud, a folder elsewhere, one listed in
 * permissions.read_dirs, a worktree, and links from the project into ~/.ssh. What the model
 * saw (its script log) is the assertion: a key's text never reaches it outside bypass.
 */

const KEY = 'FAKE-PRIVATE-KEY-4711';
const SCRIPT = fixture('harness/read-scope.yaml');

let p: Project | undefined;
let out: { dir: string; cleanup(): void } | undefined;
let tmux: TmuxServer | undefined;
afterEach(async () => {
  await tmux?.kill();
  tmux = undefined;
  p?.cleanup();
  out?.cleanup();
  p = undefined;
  out = undefined;
});

interface World {
  p: Project;
  env: Record<string, string>;
  log: string;
}

function world(mode: string): World {
  p = project('flotilla-read-scope-');
  out = tempDir('flotilla-read-outside-');
  const home = join(out.dir, 'home');
  const elsewhere = join(out.dir, 'elsewhere');
  const shared = join(out.dir, 'shared');
  for (const d of [join(home, '.ssh'), join(home, '.aws'), join(home, '.config', 'gcloud'), elsewhere, shared])
    mkdirSync(d, { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), `${KEY}\n`);
  writeFileSync(join(home, '.aws', 'credentials'), 'AWS-SECRET-ACCESS-KEY-0815\n');
  writeFileSync(join(home, '.config', 'gcloud', 'credentials.db'), 'GCLOUD-TOKEN\n');
  writeFileSync(join(elsewhere, 'notes.txt'), 'ELSEWHERE-TEXT-1\n');
  writeFileSync(join(shared, 'spec.md'), 'SHARED-SPEC-TEXT\n');
  // A folder link and a file link from the project into ~/.ssh.
  symlinkSync(join(home, '.ssh'), join(p.project, 'keys'));
  symlinkSync(join(home, '.ssh', 'id_ed25519'), join(p.project, 'notes-link.txt'));
  const worktree = p.layout.worktree('wt-1');
  mkdirSync(worktree, { recursive: true });
  writeFileSync(join(worktree, 'PLAN.md'), 'WORKTREE-PLAN\n');
  p.config({
    permissions: { read_dirs: [shared] },
    agents: { default_permission_mode: mode, allow_bypass_permissions: true },
  });
  const log = join(out.dir, 'calls.jsonl');
  const env = p.env({
    HOME: home,
    RS_ELSEWHERE: elsewhere,
    RS_SHARED: shared,
    RS_WORKTREE: worktree,
    FLOTILLA_SCRIPT_LOG: log,
    NO_COLOR: '1',
  });
  return { p, env, log };
}

/** What each tool call gave the model, in order (the last tool message of each later model call). */
function seen(log: string): string[] {
  return scriptCalls(log)
    .slice(1)
    .map((c) => JSON.stringify(c.prompt.filter((m) => m.role === 'tool').at(-1)?.content ?? null));
}

/** The calls of read-scope.yaml, in order. */
const CALL = {
  outsideRead: 0,
  outsideGrep: 1,
  sshTilde: 2,
  sshLink: 3,
  gcloudGlob: 4,
  awsGrep: 5,
  projectGrep: 6,
  readDir: 7,
  worktree: 8,
} as const;

/** What every mode but bypass gives for the credential folders, read_dirs, the worktree and the project. */
function expectConfined(s: string[]): void {
  for (const i of [CALL.sshTilde, CALL.sshLink, CALL.gcloudGlob, CALL.awsGrep])
    expect(s[i]).toMatch(/among the person's credentials, which no agent reads/);
  expect(s.join('\n')).not.toContain(KEY);
  expect(s.join('\n')).not.toMatch(/AWS-SECRET|GCLOUD-TOKEN/);
  // A walk through the project does not follow its link to the key.
  expect(s[CALL.projectGrep]).not.toContain('notes-link');
  expect(s[CALL.readDir]).toContain('SHARED-SPEC-TEXT');
  expect(s[CALL.worktree]).toContain('PLAN.md');
}

describe('read scope through a real harness', () => {
  it.each(['default', 'accept_edits'])(
    '%s: a read outside asks and the answer decides; credential folders are refused without a question',
    async (mode) => {
      const w = world(mode);
      tmux = tmuxServer();
      const envArgs = Object.entries(w.env).map(([k, v]) => `${k}=${v}`);
      await tmux.tmux(
        'new-session',
        '-d',
        '-s',
        'agent',
        '-x',
        '200',
        '-y',
        '50',
        '-c',
        w.p.project,
        '--',
        'env',
        '-i',
        ...envArgs,
        process.execPath,
        CLI,
        'run',
        '--model',
        `script:${SCRIPT}`,
      );
      await tmux.waitFor('agent', /›/);
      await tmux.tmux('send-keys', '-t', 'agent', 'go', 'Enter');
      await tmux.waitFor('agent', /Allow read: read \S*elsewhere\/notes\.txt/);
      await tmux.tmux('send-keys', '-t', 'agent', 'y', 'Enter');
      // "Always" would cover a tool, not a folder: the next read outside asks again.
      await tmux.waitFor('agent', /Allow grep: grep \S*elsewhere/);
      await tmux.tmux('send-keys', '-t', 'agent', 'n', 'Enter');
      const screen = await tmux.waitFor('agent', /SAW9/);
      expect(screen).not.toMatch(/Allow \w+: .*(\.ssh|\.aws|gcloud|shared|wt-1)/);

      const s = seen(w.log);
      expect(s).toHaveLength(9);
      expect(s[CALL.outsideRead]).toContain('ELSEWHERE-TEXT-1');
      expect(s[CALL.outsideGrep]).toMatch(/a person denied it/);
      expect(s[CALL.outsideGrep]).not.toContain('ELSEWHERE-TEXT-1');
      expectConfined(s);
      expect(readAudit(w.p.layout, { event: 'approval' }).lines).toHaveLength(2);
      const rules = readAudit(w.p.layout, { event: 'policy_denied' }).lines.map((l) => (l as { rule?: string }).rule);
      expect(rules).toEqual([
        expect.stringMatching(/^approval:/),
        'read-scope:credentials',
        'read-scope:credentials',
        'read-scope:credentials',
        'read-scope:credentials',
      ]);
      await eventually(() => listRecords(w.p.layout)[0]?.status === 'idle', 30_000, 'the agent idle after its task');
    },
    240_000,
  );

  it('plan: the harness runs no tool at all (docs/design.md §7), so nothing outside is read either', async () => {
    const w = world('plan');
    const r = await w.p.run(['run', '--model', `script:${SCRIPT}`, 'go'], { env: w.env });
    expect(r.exitCode).toBe(0);
    const s = seen(w.log);
    expect(s).toHaveLength(9);
    for (const result of s) expect(result).toMatch(/plan mode: tools are shown but nothing is executed/);
    expect(s.join('\n')).not.toMatch(new RegExp(`${KEY}|ELSEWHERE-TEXT-1|SHARED-SPEC-TEXT`));
  }, 180_000);

  it('dont_ask: a read outside is refused with what to do; the rest as in every mode', async () => {
    const w = world('dont_ask');
    const r = await w.p.run(['run', '--model', `script:${SCRIPT}`, 'go'], { env: w.env });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^SAW9 /);
    const s = seen(w.log);
    for (const i of [CALL.outsideRead, CALL.outsideGrep]) {
      expect(s[i]).toMatch(
        /outside the project, its worktrees and permissions\.read_dirs, and in dont_ask mode nobody is asked; it was not read — a person can add the folder to permissions\.read_dirs/,
      );
    }
    expect(s.join('\n')).not.toContain('ELSEWHERE-TEXT-1');
    expectConfined(s);
  }, 180_000);

  it('default with nobody to answer (headless): a read outside is refused, saying so', async () => {
    const w = world('default');
    const r = await w.p.run(['run', '--model', `script:${SCRIPT}`, 'go'], { env: w.env });
    expect(r.exitCode).toBe(0);
    const s = seen(w.log);
    expect(s[CALL.outsideRead]).toMatch(/a person must approve the read, and nobody can answer here; it was not read/);
    expect(s.join('\n')).not.toContain('ELSEWHERE-TEXT-1');
    expectConfined(s);
  }, 180_000);

  it('bypass_permissions reads anywhere, credential folders too', async () => {
    const w = world('bypass_permissions');
    const r = await w.p.run(['run', '--model', `script:${SCRIPT}`, 'go'], { env: w.env });
    expect(r.exitCode).toBe(0);
    const s = seen(w.log);
    expect(s[CALL.outsideRead]).toContain('ELSEWHERE-TEXT-1');
    expect(s[CALL.outsideGrep]).toContain('ELSEWHERE-TEXT-1');
    expect(s[CALL.sshTilde]).toContain(KEY);
    expect(s[CALL.sshLink]).toContain(KEY);
    expect(s[CALL.gcloudGlob]).toContain('credentials.db');
    expect(s[CALL.awsGrep]).toContain('AWS-SECRET-ACCESS-KEY-0815');
    expect(s[CALL.readDir]).toContain('SHARED-SPEC-TEXT');
    expect(readAudit(w.p.layout, { event: 'policy_denied' }).lines).toEqual([]);
  }, 180_000);
});

/**
 * One list of credentials (tools/sandbox-credentials.ts): what the sandbox hides from a
 * command, the harness's own read, glob and grep refuse. Every path of that list and every
 * credential the sandbox tests seed (test/helpers/credentials.ts: a key behind a dotfiles
 * link, the other CLIs' logins, the person's `hidden_paths`) is read by the agent's read tool,
 * and a few folders are searched and listed; the model sees none of their text. A path added
 * to the sandbox's list that the read tools did not refuse would fail here.
 */
describe("the harness's read tools refuse every credential the sandbox hides", () => {
  it('dont_ask: read, glob and grep of each', async () => {
    const w = world('dont_ask');
    // A home of its own: world()'s holds plain ~/.ssh and ~/.aws folders.
    const home = join(out!.dir, 'person');
    mkdirSync(home);
    seedCredentials(home, w.p.project);
    // The rest of the sandbox's list, where the seeded credentials leave it missing: a file holding a secret.
    const listed = [...HOME_CREDENTIALS, ...Object.values(CLI_LOGINS).flat()];
    for (const rel of listed) {
      if (existsSync(join(home, rel))) continue;
      mkdirSync(dirname(join(home, rel)), { recursive: true });
      writeFileSync(join(home, rel), `SECRET-${rel}\n`);
    }
    // The person's own config adds ~/private (only theirs may).
    mkdirSync(join(w.env.XDG_CONFIG_HOME!, 'flotilla'), { recursive: true });
    writeFileSync(join(w.env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml'), HIDDEN_PATHS_CONFIG);
    const reads = [
      ...listed,
      ...Object.entries(CREDENTIALS)
        .filter(([name]) => name !== 'notes')
        .map(([, rel]) => rel),
    ];
    const calls = [
      ...reads.map((rel) => ({ tool: 'read', input: { path: `~/${rel}` } })),
      ...['.ssh', '.config/gh', 'private'].map((rel) => ({
        tool: 'grep',
        input: { pattern: 'SECRET', path: `~/${rel}` },
      })),
      ...['.aws', '.codex'].map((rel) => ({ tool: 'glob', input: { pattern: `${home}/${rel}/*` } })),
      { tool: 'read', input: { path: 'probe.sh' } },
    ];
    const script = join(w.p.project, 'read-credentials.yaml');
    writeFileSync(script, stringify({ replies: [{ text: 'Reading.', tool_calls: calls }, { text: 'READ-ALL' }] }));
    const r = await w.p.run(['run', '--model', `script:${script}`, 'go'], { env: { ...w.env, HOME: home } });
    expect(r.exitCode).toBe(0);
    const results = scriptCalls(w.log)
      .at(-1)!
      .prompt.filter((m) => m.role === 'tool')
      .flatMap((m) => m.content as unknown[]);
    expect(results).toHaveLength(calls.length);
    const text = results.map((c) => JSON.stringify(c));
    // Each but the last (a file of the project, read to show the tool reads) is refused as a credential.
    for (const [i, t] of text.slice(0, -1).entries())
      expect({ call: calls[i], t }).toEqual({
        call: calls[i],
        t: expect.stringMatching(/among the person's credentials, which no agent reads/),
      });
    expect(text.at(-1)).toContain('echo probed');
    expect(secretsIn(text.join('\n'))).toEqual([]);
    expect(text.join('\n')).not.toMatch(/SECRET-\./);
  }, 180_000);
});
