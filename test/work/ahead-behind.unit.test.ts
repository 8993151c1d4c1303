import { gitAt } from '../helpers/git.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changedSince, standings } from '../../src/work/ahead-behind.js';

// The batched reads behind `review` and `status` (src/work/ahead-behind.ts) give, for every
// pair, what git gives for that pair alone: `rev-list --left-right --count`, `merge-base`,
// `diff --name-only base...own` — on a history with a moved base, a branch that merged its
// base back in, a criss-cross, a branch at the base and one with no common history.
let dir: string;
const git = (...a: string[]) => gitAt(dir, ...a).trim();
const commit = (file: string, text = file) => {
  writeFileSync(join(dir, file), `${text}\n`);
  git('add', file);
  git('commit', '-q', '-m', file);
  return git('rev-parse', 'HEAD');
};

const tips: Record<string, string> = {};
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'flotilla-ahead-behind-'));
  git('init', '-q', '-b', 'main');
  tips.root = commit('r.txt');
  git('checkout', '-q', '-b', 'a');
  commit('a.txt');
  tips.a = commit('a2.txt');
  git('checkout', '-q', 'main');
  tips.mainOld = commit('m1.txt');
  git('checkout', '-q', '-b', 'b');
  commit('b.txt');
  git('checkout', '-q', 'main');
  commit('m2.txt');
  git('checkout', '-q', 'b');
  git('merge', '-q', '--no-edit', 'main');
  tips.b = commit('b2.txt');
  // A criss-cross: x and y each merge the other's first commit.
  git('checkout', '-q', '-b', 'x', tips.mainOld);
  const x1 = commit('x.txt');
  git('checkout', '-q', '-b', 'y', tips.mainOld);
  const y1 = commit('y.txt');
  git('merge', '-q', '--no-edit', x1);
  tips.y = commit('y2.txt');
  git('checkout', '-q', 'x');
  git('merge', '-q', '--no-edit', y1);
  tips.x = commit('x2.txt');
  git('checkout', '-q', 'main');
  tips.main = commit('m3.txt', 'main again');
  git('checkout', '-q', '--orphan', 'alone');
  git('rm', '-rfq', '.');
  tips.alone = commit('o.txt');
  git('checkout', '-q', 'main');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('standings and changedSince', () => {
  // The first batch shares history (one read of it); the second has a tip with none (each pair alone).
  it.each([
    [
      'sharing history',
      [
        ['a', 'main'],
        ['b', 'main'],
        ['x', 'y'],
        ['y', 'main'],
        ['main', 'main'],
        ['root', 'main'],
        ['a', 'mainOld'],
        ['x', 'main'],
      ],
    ],
    [
      'with a tip of no common history',
      [
        ['alone', 'main'],
        ['a', 'main'],
      ],
    ],
  ])('agree with git pair by pair, read in one batch: %s', async (_, named) => {
    const pairs = named.map(([own, target]) => ({
      own: tips[own!]!,
      target: tips[target!]!,
      name: `${own} against ${target}`,
    }));
    const got = await standings(dir, pairs);
    const want = pairs.map((p) => {
      const [behind, ahead] = git('rev-list', '--left-right', '--count', `${p.target}...${p.own}`)
        .split(/\s+/)
        .map(Number);
      let base: string | null = null;
      try {
        base = git('merge-base', '--all', p.target, p.own);
      } catch {
        /* no common history */
      }
      return { ahead, behind, bases: base ? base.split('\n') : [] };
    });
    pairs.forEach((p, k) => {
      expect({ ahead: got[k]!.ahead, behind: got[k]!.behind }, p.name).toEqual({
        ahead: want[k]!.ahead,
        behind: want[k]!.behind,
      });
      // With several merge bases (the criss-cross), any one of them, as `git diff A...B` takes.
      if (want[k]!.bases.length === 0) expect(got[k]!.base, p.name).toBeNull();
      else expect(want[k]!.bases, p.name).toContain(got[k]!.base);
    });

    const withBase = pairs.flatMap((p, k) => (got[k]!.base ? [{ ...p, base: got[k]!.base! }] : []));
    const files = await changedSince(dir, withBase);
    withBase.forEach((p, k) => {
      const names = git('diff', '--name-only', p.base, p.own).split('\n').filter(Boolean);
      expect(files[k], p.name).toEqual(names);
    });
    // The branch that merged main back in changed only its own files since.
    const b = withBase.findIndex((p) => p.name === 'b against main');
    if (b >= 0) expect(files[b]).toEqual(['b.txt', 'b2.txt']);
  });

  // The worktrees' shared base tried as the floor instead of `merge-base --octopus`: where every
  // tip descends from it (the root, mainOld for these) and where some do not (a, main, alone),
  // the counts are those read without it.
  it.each(['root', 'mainOld', 'a', 'main', 'alone'])('give the same answer with the floor %s', async (floor) => {
    const named = [
      ['a', 'main'],
      ['b', 'main'],
      ['x', 'y'],
      ['y', 'main'],
      ['root', 'main'],
    ];
    const pairs = named.map(([own, target]) => ({ own: tips[own!]!, target: tips[target!]! }));
    expect(await standings(dir, pairs, undefined, tips[floor]!)).toEqual(await standings(dir, pairs));
  });
});
