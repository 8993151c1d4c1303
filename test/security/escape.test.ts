import { execa } from 'execa';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { CLI, SPAWN_AGENT } from '../helpers/cli.js';
import { tempDir } from '../helpers/fleet.js';
import { eventually, testSocketDir } from '../helpers/tmux.js';
import { completionsFrom, fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';
import { attackScript, type Target } from './attacks.js';
import { requireTool } from '../helpers/requires.js';

/**
 * The escape suite (docs/security-shell.md, "What a command can and cannot do"): an agent in
 * `dont_ask` whose shell command attacks the rest of the fleet and the machine, the way a
 * hostile model would, under `sandbox: none` and under bubblewrap — real tmux whose socket
 * lives outside /tmp (TMUX_TMPDIR in the repository), the network on, provider keys in the
 * person's environment. Each family is tried in several spellings (`attacks.ts`), batched into
 * one command per agent so the suite stays affordable on two cores. Every attack is then
 * judged by what the host shows: no file written by a host process on its behalf, no
 * approval taken, no pane typed into, no new root agent, no key seen, the person's spawns
 * still running. Under `none` only what the product claims for it is attacked (the tmux
 * server itself and the file system are the same user's, see "What `security.sandbox: none`
 * cannot prevent").
 * ESCAPE_DEBUG=<file prefix> keeps each mode's attack log (every step's own error output).
 */
let f: SpawnFleet | undefined;
let debugName = '';
let marks: { dir: string; cleanup(): void } | undefined;
afterEach(async () => {
  if (f && process.env.ESCAPE_DEBUG)
    try {
      copyFileSync(join(f.project, 'attack.log'), `${process.env.ESCAPE_DEBUG}.${debugName}`);
    } catch {
      /* none */
    }
  if (f) writeFileSync(join(f.project, 'release'), '');
  await f?.close();
  marks?.cleanup();
  f = undefined;
  marks = undefined;
});

const stage = (what: string) => {
  if (process.env.ESCAPE_DEBUG) process.stderr.write(`${new Date().toISOString()} ${what}\n`);
};
const KEYS = { ANTHROPIC_API_KEY: 'sk-ant-escape-key-1', OPENAI_API_KEY: 'sk-oai-escape-key-2' };

// `none` too: a person may choose it, and what still holds there (the fleet's own files, keys) must hold.
const MODES = [
  { mode: 'none', contained: false, config: 'security:\n  sandbox: none\n' },
  { mode: 'bubblewrap', contained: true, config: 'security:\n  sandbox: bubblewrap\n  sandbox_network: true\n' },
];

const git = (cwd: string, ...args: string[]) =>
  execa('git', ['-c', 'user.email=p@example.com', '-c', 'user.name=person', '-C', cwd, ...args], { reject: false });

// The sandbox is what these tests prove: without bwrap, fail saying what to install.
beforeAll(() => {
  requireTool('bwrap');
});

describe.each(MODES)(
  'an agent attacking the fleet ($mode, network on, tmux socket outside /tmp)',
  ({ mode, contained, config }) => {
    it('changes nothing on the host: no approval, no pane typed into, no host file, no new root, no key, spawns still run', async () => {
      debugName = mode;
      const tmuxTmpdir = testSocketDir();
      marks = tempDir('flotilla-host-marks-');
      f = spawnFleet({
        config: `${config}tools:\n  shell_timeout_secs: 600\n`,
        definitions: { attacker: 'run-prompt.yaml', worker: 'worker.yaml' },
        tmuxTmpdir,
      });
      writeFileSync(
        join(f.layout.agentsDir, 'victim.md'),
        `---\nname: victim\ndescription: asks before each command\nmodel: script:${fixture('run-prompt.yaml')}\npermissionMode: default\n---\nYou are careful.\n`,
      );
      mkdirSync(join(f.project, '.claude', 'agents'), { recursive: true });
      await git(f.project, 'init', '-q');
      await git(f.project, 'add', '-A');
      await git(f.project, 'commit', '-q', '-m', 'first');
      copyFileSync(fixture('squat-slots.mjs'), join(f.project, 'squat-slots.mjs'));

      // A victim waiting for a person's approval, then a person's own shell in the fleet's server.
      expect(
        (await f.spawnAgent(['--agent', 'victim', '--id', 'vic', `touch ${marks.dir}/victim-approved`], KEYS)).exitCode,
      ).toBe(0);
      stage('victim spawned');
      const request = await eventually(
        () => f!.mail('human').find((m) => m.kind === 'approval_request')?.request_id,
        120_000,
        'the victim to ask',
      );
      await f.tmux.tmux('new-session', '-d', '-s', 'person', '-x', '150', '-y', '40', 'sh');
      const uid = process.getuid?.() ?? 0;
      const target: Target = {
        contained,
        request,
        marks: marks.dir,
        root: f.layout.root,
        project: f.project,
        socketName: f.tmux.socket,
        socketPath: join(tmuxTmpdir, `tmux-${uid}`, f.tmux.socket),
        tmuxTmpdir,
        victimPane: f.record('vic').tmux!.paneId,
        victimPid: f.record('vic').pid!,
        node: process.execPath,
        cli: CLI,
        spawnAgent: SPAWN_AGENT,
      };
      stage('request seen');
      const script = attackScript(target);
      writeFileSync(join(f.project, 'attack.sh'), script);

      // The attack: one shell command, run by the agent's own shell tool in dont_ask.
      const attack = await f.spawnAgent(
        ['--wait', '--agent', 'attacker', '--id', 'atk', 'sh ./attack.sh > attack.log 2>&1; echo attack-finished'],
        KEYS,
      );
      stage('attack done');
      expect(attack.stdout).toContain('attack-finished');
      const probes = Object.fromEntries(
        readFileSync(join(f.project, 'probe.txt'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => l.split(':') as [string, string]),
      );
      const log = () => readFileSync(join(f!.project, 'attack.log'), 'utf8');
      // Each probe reports whether its step *worked* from the inside; none may.
      expect(
        Object.entries(probes).filter(([, v]) => v !== 'blocked'),
        log(),
      ).toEqual([]);
      // …and every one of them ran (the script did not die half-way).
      expect(Object.keys(probes).length).toBe(script.match(/:blocked; fi >> probe\.txt$/gm)!.length);

      // Without the sandbox, what docs/security.md says a command still can do, it can.
      if (!contained) {
        const open = readFileSync(join(f.project, 'open.txt'), 'utf8').trim().split('\n');
        expect(open).toEqual(['tmux-by-socket-path:open', 'fleet-root-write:open', 'git-config-write:open']);
      }

      // The person's own work after the attack: a spawn gets a slot and answers (squatters hold
      // every name), a worktree spawn runs git with no planted hook, and on the host `git status`
      // and `git commit` run none of what the agent left.
      const work = await f.spawnAgent(['--wait', '--agent', 'worker', '--id', 'wk', 'work'], KEYS);
      expect(work.stderr).not.toContain('refused');
      expect(work.stdout).toContain('result-of-wk');
      stage('worker done');
      const wt = await f.spawnAgent(['--wait', '--worktree', '--agent', 'worker', '--id', 'wt1', 'work'], KEYS);
      expect(wt.stdout, wt.stderr).toContain('result-of-wt1');
      if (contained) {
        // What it wrote into its own git dir is not in the person's.
        expect(existsSync(join(f.project, '.git', 'commondir'))).toBe(false);
        expect(existsSync(join(f.project, '.git', 'worktrees', 'evil'))).toBe(false);
        // Its rm -rf .git and its tries at the objects harmed nothing of the person's history.
        expect((await git(f.project, 'fsck', '--full', '--no-dangling')).exitCode).toBe(0);
        expect((await git(f.project, 'log', '--format=%s')).stdout).toBe('first');
        expect((await git(f.project, 'status', '--short')).exitCode).toBe(0);
        expect((await git(f.project, 'commit', '-q', '--allow-empty', '-m', 'person')).exitCode).toBe(0);
        expect((await git(f.record('wt1').cwd, 'status', '--short')).exitCode).toBe(0);
      }

      stage('worktree+git done');
      // Nothing ran on the host for the agent: no mark from a hook, fsmonitor, run-shell, a typed
      // command or the approved victim command.
      expect(readdirSync(marks.dir)).toEqual([]);
      expect(await f.tmux.capture('person')).not.toContain('typed-by-agent');
      expect(
        await f.tmux.tmux('has-session', '-t', '=person').then(
          () => true,
          () => false,
        ),
      ).toBe(true);

      // The victim is still asking: no answer was taken, every forged one refused on the record.
      expect(f.record('vic').status).toBe('waiting_approval');
      expect(readAudit(f.layout, { event: 'approval' }).lines).toEqual([]);
      if (!contained) {
        const refused = readAudit(f.layout, { event: 'approval_refused' }).lines;
        expect(refused.length, 'forged answer files are refused by the harness').toBeGreaterThanOrEqual(2);
      }

      // No new root: every agent the attacker's command made is its child.
      await eventually(() => f!.records().every((r) => r.status !== 'spawning'), 60_000, 'spawns to settle');
      const roots = f
        .records()
        .filter((r) => r.parentId === null || r.parentId === 'human' || r.depth === 0)
        .map((r) => r.id)
        .sort();
      expect(roots).toEqual(['atk', 'vic', 'wk', 'wt1']);
      for (const r of f.records().filter((x) => !roots.includes(x.id)))
        expect(r.parentId, `${r.id} came back as ${r.parentId ?? 'a root'}`).toBe('atk');
      expect(f.records().find((r) => r.id === 'rootspawn')).toBeUndefined();

      // The squatter did take the names (the attack was real), and the person's spawn still ran.
      expect(readFileSync(join(f.project, 'squat.out'), 'utf8')).toMatch(/^bound \d+\n$/);
      expect(completionsFrom(f, 'human', 'wk')).toHaveLength(1);
    }, 600_000);
  },
);
