import { gitAt } from '../helpers/git.js';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRecord, listRecords } from '../../src/fleet/registry.js';
import { ensureState, layoutFor } from '../../src/layout/layout.js';
import { reviewWork } from '../../src/work/review.js';
import { sleep } from '../../src/sleep.js';
import { recordInput } from '../helpers/records.js';

// review reads the branches in batches (one history read from the worktrees' shared base, the
// file lists beside it) and keeps worktrees' counts: every row must be what git says for that
// branch alone — a conflicting branch, one its base moved past, uncommitted files (changed
// again after a review kept the count), a merge base other than the shared base — and the
// same as a review with no cache at all.
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-review-finish-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const git = gitAt;
const layout = layoutFor(join(dir, '.flotilla'), dir);

describe('review, batched and cached', () => {
  it('gives git’s answer for each branch and worktree, as a review with no cache does', async () => {
    git(dir, 'init', '-q', '-b', 'main');
    writeFileSync(join(dir, '.gitignore'), '.flotilla/\n');
    for (const f of ['a.txt', 'b.txt', 'c.txt']) writeFileSync(join(dir, f), `${f}\n`);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'init');
    const base = git(dir, 'rev-parse', 'HEAD').trim();
    ensureState(layout);
    // wa: ahead only; wb: edits a.txt, which main edits too (conflict); wc: edits c.txt (main
    // moves past it, clean); wd: commits, then leaves a change and a new file uncommitted; we:
    // merges main back in once main moved (its merge base is no longer the worktrees' base).
    const work: Record<string, (wt: string) => void> = {
      wa: (wt) => (writeFileSync(join(wt, 'b.txt'), 'from wa\n'), git(wt, 'commit', '-q', '-am', 'wa')),
      wb: (wt) => (writeFileSync(join(wt, 'a.txt'), 'from wb\n'), git(wt, 'commit', '-q', '-am', 'wb')),
      wc: (wt) => (writeFileSync(join(wt, 'c.txt'), 'from wc\n'), git(wt, 'commit', '-q', '-am', 'wc')),
      wd: (wt) => {
        writeFileSync(join(wt, 'c.txt'), 'from wd\n');
        git(wt, 'commit', '-q', '-am', 'wd');
        writeFileSync(join(wt, 'b.txt'), 'wd, not committed\n');
        writeFileSync(join(wt, 'new.txt'), 'new\n');
      },
      we: (wt) => (
        writeFileSync(join(wt, 'e.txt'), 'from we\n'),
        git(wt, 'add', 'e.txt'),
        git(wt, 'commit', '-q', '-m', 'we')
      ),
    };
    for (const [id, act] of Object.entries(work)) {
      const wt = layout.worktree(id);
      git(dir, 'worktree', 'add', '-q', '-b', `flotilla/${id}`, wt, 'main');
      act(wt);
      createRecord(
        layout,
        recordInput(id, { cwd: wt, worktree: wt, base: { branch: 'main', commit: base }, status: 'completed' }),
      );
    }
    writeFileSync(join(dir, 'a.txt'), 'main moved\n');
    git(dir, 'commit', '-q', '-am', 'main moves');
    git(layout.worktree('we'), 'merge', '-q', '--no-edit', 'main');
    // A review keeps every count once the worktrees are still (past the settle window).
    await sleep(2_100);
    await reviewWork(layout, listRecords(layout));
    // After that review: another file in wd (git's count, not the kept one, must show).
    writeFileSync(join(layout.worktree('wd'), 'newer.txt'), 'newer\n');

    const rows = await reviewWork(layout, listRecords(layout));
    const want = Object.keys(work).map((id) => {
      const b = `flotilla/${id}`;
      const [behind, ahead] = git(dir, 'rev-list', '--left-right', '--count', `main...${b}`).split(/\s+/).map(Number);
      const files = git(dir, 'diff', '--name-only', `main...${b}`).split('\n').filter(Boolean);
      let conflicts: string[] = [];
      try {
        git(dir, 'merge-tree', '--write-tree', '--name-only', '--no-messages', 'main', b);
      } catch (err) {
        conflicts = String((err as { stdout: string }).stdout)
          .split('\n')
          .slice(1)
          .filter(Boolean);
      }
      const uncommitted = git(layout.worktree(id), 'status', '--porcelain', '--untracked-files=all')
        .split('\n')
        .filter(Boolean).length;
      return { id, ahead, behind, files, conflicts, uncommitted };
    });
    const pick = (r: (typeof rows)[number]) => ({
      id: r.id,
      ahead: r.ahead,
      behind: r.behind,
      files: r.files,
      conflicts: r.conflicts,
      uncommitted: r.uncommitted,
    });
    expect(rows.map(pick)).toEqual(want);
    // What the cases are: a conflict, a branch behind its base, uncommitted files.
    expect(want.find((w) => w.id === 'wb')).toMatchObject({ behind: 1, conflicts: ['a.txt'] });
    expect(want.find((w) => w.id === 'wc')).toMatchObject({ behind: 1, conflicts: [] });
    expect(want.find((w) => w.id === 'wd')!.uncommitted).toBe(3);
    expect(want.find((w) => w.id === 'we')).toMatchObject({ ahead: 2, behind: 0, files: ['e.txt'] });

    // The same review with nothing recorded or kept.
    for (const f of [layout.worktreeStatusCache, layout.reviewBranchCache]) rmSync(f, { recursive: true, force: true });
    expect(await reviewWork(layout, listRecords(layout))).toEqual(rows);
  });
});
