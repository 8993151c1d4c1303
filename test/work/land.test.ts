import { execa } from 'execa';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireTool } from '../helpers/requires.js';
import { RUNTIME_FIXTURES } from '../runtimes/helpers.js';
import { namingFor, startFakeVendor, type FakeVendor } from '../runtimes/fake-vendor.js';
import { TARGETS } from '../runtimes/targets.js';
import { fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

// The work lands, end to end under the default sandbox (docs/design.md §12): our agent, a Claude
// Code member and a Codex member each fix one file in their own worktree and commit; the person
// reviews and merges all three; a fourth whose change conflicts is reported with its file and
// not merged; the person's log shows the three commits authored by the agents' ids.
let f: SpawnFleet | undefined;
// The default sandbox ('auto') is bubblewrap where it works: without bwrap, fail saying what to install.
beforeAll(() => {
  requireTool('bwrap');
});
const vendors: FakeVendor[] = [];
afterEach(async () => {
  for (const v of vendors.splice(0)) await v.close();
  await f?.close();
  f = undefined;
});

// The person's identity for merge commits (a fresh HOME has none).
const PERSON = {
  GIT_AUTHOR_NAME: 'person',
  GIT_AUTHOR_EMAIL: 'p@example.com',
  GIT_COMMITTER_NAME: 'person',
  GIT_COMMITTER_EMAIL: 'p@example.com',
};

describe('the work lands', () => {
  it(
    'three agents of three runtimes commit in their worktrees; the person reviews and merges them; a conflicting fourth is not merged',
    { timeout: 900_000 },
    async () => {
      const claude = TARGETS.claude();
      const codex = TARGETS.codex();
      const fl = spawnFleet();
      f = fl;
      const git = (...a: string[]) => execa('git', a, { cwd: fl.project, env: PERSON });
      await git('init', '-q', '-b', 'main');
      await git('add', 'README');
      await git('commit', '-q', '-m', 'init');

      // Each vendor CLI talks to its own local fake API, which plays its script: fix one file, commit.
      const fakeClaude = await startFakeVendor(
        claude.wire,
        join(RUNTIME_FIXTURES, 'commit-b.yaml'),
        namingFor(claude.runtime),
      );
      const fakeCodex = await startFakeVendor(
        codex.wire,
        join(RUNTIME_FIXTURES, 'commit-c.yaml'),
        namingFor(codex.runtime),
      );
      vendors.push(fakeClaude, fakeCodex);
      Object.assign(
        fl.env,
        { [claude.runtime.binEnv]: claude.bin, [codex.runtime.binEnv]: codex.bin },
        claude.env(fakeClaude.url),
        codex.env(fakeCodex.url),
      );
      for (const [name, runtime] of [
        ['fixer-b', 'claude'],
        ['fixer-c', 'codex'],
      ] as const) {
        writeFileSync(
          join(fl.layout.agentsDir, `${name}.md`),
          `---\nname: ${name}\ndescription: fixes a file\nruntime: ${runtime}\npermissions:\n  permission_mode: dont_ask\n---\nYou fix files.\n`,
        );
      }

      const spawned = await Promise.all([
        fl.spawnAgent(['--worktree', '--id', 'cc', '--agent', 'fixer-b', ...claude.spawnArgs, 'fix b.txt and commit']),
        fl.spawnAgent(['--worktree', '--id', 'cx', '--agent', 'fixer-c', ...codex.spawnArgs, 'fix c.txt and commit']),
        fl.spawnAgent([
          '--worktree',
          '--wait',
          '--id',
          'ours',
          '--model',
          `script:${fixture('land-a.yaml')}`,
          'fix a.txt and commit',
        ]),
        fl.spawnAgent([
          '--worktree',
          '--wait',
          '--id',
          'late',
          '--model',
          `script:${fixture('committer-other.yaml')}`,
          'rewrite a.txt and commit',
        ]),
      ]);
      for (const r of spawned) expect(r.exitCode, r.stderr).toBe(0);
      // Each commits inside the sandbox: the repository's config, tried after the commit, stayed read-only.
      expect(spawned[2]!.stdout).toContain('Answer: git config: read-only');
      const waited = await fl.flotilla(['wait', 'cc', 'cx', '--timeout', '600']);
      expect(waited.exitCode, `${waited.stdout}\n${waited.stderr}`).toBe(0);
      expect(waited.stdout).toMatch(/^## cc: completed\nFinal answer: committed$/m);
      expect(waited.stdout).toMatch(/^## cx: completed\nFinal answer: committed$/m);
      for (const v of [fakeClaude, fakeCodex]) expect(v.seen()).toMatch(/git config: read-only/);
      expect(
        (await execa('git', ['config', '--local', '--get', 'flotilla.probe'], { cwd: fl.project, reject: false }))
          .exitCode,
      ).toBe(1);

      // What the person sees before taking anything: each agent's branch, one commit ahead, its file.
      const review = JSON.parse((await fl.flotilla(['review', '--json'])).stdout) as {
        id: string;
        branch: string;
        ahead: number;
        files: string[];
        conflicts: string[];
      }[];
      const byId = Object.fromEntries(review.map((r) => [r.id, r]));
      expect(Object.keys(byId).sort()).toEqual(['cc', 'cx', 'late', 'ours']);
      expect(byId.cc).toMatchObject({ branch: 'flotilla/cc', ahead: 1, files: ['b.txt'], conflicts: [] });
      expect(byId.cx).toMatchObject({ branch: 'flotilla/cx', ahead: 1, files: ['c.txt'], conflicts: [] });
      expect(byId.ours).toMatchObject({ branch: 'flotilla/ours', ahead: 1, files: ['a.txt'], conflicts: [] });
      expect(byId.late).toMatchObject({ branch: 'flotilla/late', ahead: 1, files: ['a.txt'], conflicts: [] });

      for (const id of ['ours', 'cc', 'cx']) {
        const m = await fl.flotilla(['merge', id], PERSON);
        expect(m.exitCode, m.stderr).toBe(0);
        expect(m.stdout).toContain(`merged flotilla/${id} into main`);
      }
      // With ours merged, late's a.txt conflicts: review says so, and merge refuses, naming the file.
      expect((await fl.flotilla(['review'])).stdout).toMatch(/^late .*flotilla\/late → main .*— CONFLICTS: a\.txt$/m);
      const mainBefore = (await git('rev-parse', 'main')).stdout;
      const refused = await fl.flotilla(['merge', 'late'], PERSON);
      expect(refused.exitCode).toBe(1);
      expect(refused.stderr).toContain('not merged: flotilla/late conflicts with main in 1 file — nothing was changed');
      expect(refused.stderr).toMatch(/^ {2}a\.txt$/m);
      expect((await git('rev-parse', 'main')).stdout).toBe(mainBefore);

      // The person's checkout has the three fixes, and their log the three agents' commits under their ids.
      for (const file of ['a.txt', 'b.txt', 'c.txt'])
        expect(readFileSync(join(fl.project, file), 'utf8')).toBe('fixed\n');
      const authored = (await git('log', '--no-merges', '--format=%an <%ae> %s', 'main')).stdout.split('\n');
      expect(authored.slice(0, 3).sort()).toEqual([
        'cc <cc@flotilla> fix b',
        'cx <cx@flotilla> fix c',
        'ours <ours@flotilla> fix a',
      ]);
      expect(authored.slice(3)).toEqual(['person <p@example.com> init']);
      expect((await git('status', '--porcelain', '--untracked-files=no')).stdout).toBe('');
      expect(JSON.parse((await fl.flotilla(['review', '--json'])).stdout).map((r: { id: string }) => r.id)).toEqual([
        'late',
      ]);
    },
  );
});
