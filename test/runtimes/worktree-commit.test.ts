import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { explain } from './suite.js';
import { vendorFleet, type VendorFleet } from './helpers.js';
import { TARGETS } from './targets.js';

/**
 * A vendor CLI member with `--worktree` commits from its own shell tool inside Flotilla's
 * bubblewrap (docs/security.md, "Commits in the sandbox"), on its branch `flotilla/<id>`,
 * authored by its id; the person's branch does not move.
 */
let fleet: VendorFleet | undefined;
afterEach(async (ctx) => {
  if (fleet && ctx.task.result?.state === 'fail') await explain(fleet);
  await fleet?.dispose();
  fleet = undefined;
});

describe('a vendor CLI member commits in its worktree, in the sandbox', { timeout: 600_000 }, () => {
  it.each(['claude', 'codex', 'gemini'] as const)('%s', async (name) => {
    const t = TARGETS[name]();
    const f = await vendorFleet({
      ...t,
      script: 'commit.yaml',
      config: 'security:\n  sandbox: bubblewrap\n',
      definitions: { a: 'permissions:\n  permission_mode: dont_ask\n' },
    });
    fleet = f;
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
