import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

/**
 * A vendor CLI member with `--worktree` commits from its own shell tool inside Flotilla's
 * bubblewrap (docs/security.md, "Commits in the sandbox"), on its branch `flotilla/<id>`,
 * authored by its id; the person's branch does not move.
 */
const fleets = vendorFleets();

describe('a vendor CLI member commits in its worktree, in the sandbox', { timeout: 600_000 }, () => {
  it.each(RUNTIMES)('%s', async (name) => {
    const t = TARGETS[name]();
    const f = await fleets.open({
      ...t,
      script: 'commit.yaml',
      config: 'security:\n  sandbox: bubblewrap\n',
      definitions: { a: DONT_ASK },
    });
    const git = (...a: string[]) => execa('git', a, { cwd: f.project });
    await git('init', '-q', '-b', 'main');
    writeFileSync(join(f.project, 'a.txt'), 'a\n');
    await git('add', 'a.txt');
    await git('-c', 'user.email=p@example.com', '-c', 'user.name=person', 'commit', '-q', '-m', 'init');
    const id = await f.spawnChild('a', `${name}-commit`, 'fix a.txt and commit', ['--worktree', ...t.spawnArgs]);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the completion');
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('Final answer: committed');
    expect((await git('log', '-1', '--format=%an <%ae> %s', `flotilla/${id}`)).stdout).toBe(
      `${id} <${id}@flotilla> fix a`,
    );
    expect((await git('log', '-1', '--format=%s', 'main')).stdout).toBe('init');
  });
});

describe(
  'a vendor CLI member commits in place, in the sandbox, with security.in_place_commits',
  { timeout: 600_000 },
  () => {
    it.each(RUNTIMES)('%s', async (name) => {
      const t = TARGETS[name]();
      const f = await fleets.open({
        ...t,
        script: 'commit.yaml',
        config: 'security:\n  sandbox: bubblewrap\n  in_place_commits: true\n',
        definitions: { a: DONT_ASK },
      });
      const git = (...a: string[]) => execa('git', a, { cwd: f.project });
      await git('init', '-q', '-b', 'main');
      writeFileSync(join(f.project, 'a.txt'), 'a\n');
      await git('add', 'a.txt');
      await git('-c', 'user.email=p@example.com', '-c', 'user.name=person', 'commit', '-q', '-m', 'init');
      const id = await f.spawnChild('a', `${name}-here`, 'fix a.txt and commit', t.spawnArgs);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the completion');
      expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('Final answer: committed');
      expect((await git('log', '-1', '--format=%an <%ae> %s', `flotilla/${id}`)).stdout).toBe(
        `${id} <${id}@flotilla> fix a`,
      );
      // The person's branch does not move; the fixed file is in their checkout, a change not yet theirs.
      expect((await git('log', '-1', '--format=%s', 'main')).stdout).toBe('init');
      expect((await git('status', '--porcelain', '--', 'a.txt')).stdout).toBe(' M a.txt');
    });
  },
);
