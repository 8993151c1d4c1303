import { gitAt } from '../helpers/git.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { layoutFor } from '../../src/layout/layout.js';
import { cachedBranchStates } from '../../src/work/branch-cache.js';
import { branchStates, branchTips, type BranchOf } from '../../src/work/branch-state.js';

// review keeps the last branch states while every tip and base is what it was. Each change
// below is made after the cache holds a wrong answer (ahead 99): a stale answer shows as 99,
// a fresh one as what `branchStates` itself says.
const dir = mkdtempSync(join(tmpdir(), 'flotilla-branch-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const git = (...a: string[]) => gitAt(dir, ...a).trim();
const commit = (file: string) => {
  writeFileSync(join(dir, file), `${file}\n`);
  git('add', file);
  git('commit', '-q', '-m', file);
};
const layout = layoutFor(join(dir, '.flotilla'), dir);

describe('cachedBranchStates', () => {
  it('answers from the last review while no tip, base or config changed, and as git does after any change', async () => {
    git('init', '-q', '-b', 'main');
    commit('r.txt');
    const base = git('rev-parse', 'HEAD');
    git('checkout', '-q', '-b', 'flotilla/w1');
    commit('a.txt');
    git('checkout', '-q', 'main');
    const items: BranchOf[] = [{ branch: 'flotilla/w1', base: { branch: 'main', commit: base } }];
    const review = async () => (await cachedBranchStates(layout, items, await branchTips(layout)))[0]!;
    const fresh = async () => (await branchStates(layout, items))[0]!;
    const poison = async () => {
      await review();
      const file = JSON.parse(readFileSync(layout.reviewBranchCache, 'utf8')) as { states: { ahead: number }[] };
      file.states[0]!.ahead = 99;
      writeFileSync(layout.reviewBranchCache, JSON.stringify(file));
      expect((await review()).ahead).toBe(99);
    };
    expect(await review()).toEqual(await fresh());
    const changes: [string, () => void][] = [
      [
        'a commit on the branch',
        () => (git('checkout', '-q', 'flotilla/w1'), commit('b.txt'), git('checkout', '-q', 'main')),
      ],
      ['the base moved', () => commit('m.txt')],
      ['another branch of the person’s moved', () => git('branch', '-f', 'other', 'HEAD')],
      ['a replace ref', () => git('replace', git('rev-parse', 'flotilla/w1'), git('rev-parse', 'flotilla/w1~1'))],
      ['the config', () => git('config', 'merge.renames', 'false')],
    ];
    for (const [what, change] of changes) {
      await poison();
      change();
      const got = await review();
      expect([what, got]).toEqual([what, await fresh()]);
      expect([what, got.ahead]).not.toEqual([what, 99]);
    }
  });
});
