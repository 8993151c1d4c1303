import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { FleetReader } from '../../src/watch/gather.js';
import { layoutColumns, rowText } from '../../src/watch/format.js';
import { eventually } from '../helpers/tmux.js';
import { fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

// A lead's merge_work (docs/design.md §12): it takes the work of an agent it spawned, as
// `flotilla merge` does, and is refused another tree's; the model reads both results.
let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const PERSON = {
  GIT_AUTHOR_NAME: 'person',
  GIT_AUTHOR_EMAIL: 'p@example.com',
  GIT_COMMITTER_NAME: 'person',
  GIT_COMMITTER_EMAIL: 'p@example.com',
};

describe('merge_work', () => {
  it(
    "a lead merges its worktree child's commit into main and is refused an agent that is not its own",
    { timeout: 300_000 },
    async () => {
      const fl = spawnFleet({ definitions: { lead: 'lead-merge.yaml', kid: 'committer.yaml' } });
      f = fl;
      const git = (...a: string[]) => execa('git', a, { cwd: fl.project, env: PERSON });
      await git('init', '-q', '-b', 'main');
      await git('add', 'README');
      await git('commit', '-q', '-m', 'init');

      // The person's own worktree agent: not the lead's to merge.
      const other = await fl.spawnAgent([
        '--worktree',
        '--wait',
        '--id',
        'other',
        '--model',
        `script:${fixture('committer-c.yaml')}`,
        'work',
      ]);
      expect(other.exitCode, other.stderr).toBe(0);

      const lead = await fl.spawnAgent(['--wait', '--agent', 'lead', '--id', 'lead', 'lead the work']);
      expect(lead.exitCode, lead.stderr).toBe(0);

      // What the model saw from merge_work on its child, passed on to the person.
      const said = fl
        .mail('human')
        .filter((m) => m.kind === 'message' && m.from === 'lead')
        .map((m) => m.body);
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(
        /^merge_work said: Merged flotilla\/kid into main \(fast-forward\), now at [0-9a-f]{12}\.$/,
      );
      // And the refusal, in its final answer.
      expect(lead.stdout).toContain(
        "Other: merge_work failed: 'other' is not one of your agents — you may merge only the work of agents you spawned (and theirs); a person merges the rest with flotilla merge other",
      );

      expect((await git('log', '--format=%an %s', 'main')).stdout.split('\n')).toEqual(['kid fix a', 'person init']);
      expect((await execa('cat', ['a.txt'], { cwd: fl.project })).stdout).toBe('fixed');
      // other's branch is untouched and still waits for review.
      expect((await git('log', '-1', '--format=%an %s', 'flotilla/other')).stdout).toBe('other add c');
      const review = JSON.parse((await fl.flotilla(['review', '--json'])).stdout) as { id: string }[];
      expect(review.map((r) => r.id)).toEqual(['other']);

      // Its standing as the person sees it: main moved by kid's merge, so other is one behind.
      const status = await fl.flotilla(['status']);
      expect(status.stdout).toMatch(/^other .*⎇ flotilla\/other ↑1 ↓1 {2}/m);
      expect(status.stdout).toMatch(/^ {2}kid .*⎇ flotilla\/kid ↑0 ↓0 {2}/m);
      const rows = JSON.parse((await fl.flotilla(['status', '--json'])).stdout) as { id: string; work?: unknown }[];
      expect(rows.find((r) => r.id === 'other')?.work).toEqual({
        branch: 'flotilla/other',
        base: 'main',
        ahead: 1,
        behind: 1,
      });
      // The lead worked in place: its own branch, with nothing committed, behind main by kid's merge.
      expect(rows.find((r) => r.id === 'lead')?.work).toEqual({
        branch: 'flotilla/lead',
        base: 'main',
        ahead: 0,
        behind: 1,
      });
      // The dashboard's row: read from git in the background, shown on a later frame.
      const reader = new FleetReader(fl.layout);
      let row = reader.snapshot().rows.find((r) => r.id === 'other');
      await eventually(
        () => (row = reader.snapshot(Date.now() + 10_000).rows.find((r) => r.id === 'other'))?.work !== '',
        10_000,
        'the branch mark',
      );
      expect(rowText(row!, layoutColumns(200, [row!]), false)).toMatch(/ ⎇ flotilla\/other ↑1 ↓1 +Answer: done/);
    },
  );
});
