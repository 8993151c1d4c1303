import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

/**
 * A vendor CLI member, with `--worktree` or in place, commits from its own shell tool inside Flotilla's
 * bubblewrap (docs/security.md, "Commits in the sandbox"), on its branch `flotilla/<id>`,
 * authored by its id; the person's branch does not move.
 */
const fleets = vendorFleets();

/** Where the member works: its own worktree, or in place. */
const PLACES = [
  { where: 'in its worktree', spawn: ['--worktree'], suffix: 'commit' },
  { where: 'in place', spawn: [], suffix: 'here' },
];

describe.each(PLACES)('a vendor CLI member commits $where, in the sandbox', ({ where, spawn, suffix }) => {
  it.each(RUNTIMES)('%s', { timeout: 600_000 }, async (name) => {
    const t = TARGETS[name]();
    const f = await fleets.open({
      ...t,
      script: 'commit.yaml',
      // bubblewrap, not `auto`: a machine without it would pass here unsandboxed, proving nothing.
      config: 'security:\n  sandbox: bubblewrap\n',
      definitions: { a: DONT_ASK },
    });
    const git = (...a: string[]) => execa('git', a, { cwd: f.project });
    await git('init', '-q', '-b', 'main');
    writeFileSync(join(f.project, 'a.txt'), 'a\n');
    await git('add', 'a.txt');
    await git('-c', 'user.email=p@example.com', '-c', 'user.name=person', 'commit', '-q', '-m', 'init');
    const id = await f.spawnChild('a', `${name}-${suffix}`, 'fix a.txt and commit', [...spawn, ...t.spawnArgs]);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the completion');
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('Final answer: committed');
    expect((await git('log', '-1', '--format=%an <%ae> %s', `flotilla/${id}`)).stdout).toBe(
      `${id} <${id}@flotilla> fix a`,
    );
    // The person's branch does not move.
    expect((await git('log', '-1', '--format=%s', 'main')).stdout).toBe('init');
    // In place, the fixed file is in the person's checkout, a change not yet theirs.
    if (where.startsWith('in place'))
      expect((await git('status', '--porcelain', '--', 'a.txt')).stdout).toBe(' M a.txt');
  });
});
