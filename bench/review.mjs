// `flotilla review` with N agents' worktrees (docs/design.md §12), side by side with what git
// alone needs for the same answer's core: one `git for-each-ref` plus one `git diff
// --shortstat` per branch. Both run as processes, alternately, on the same repository.
// `--timeline`: each worktree made, then its agent's edit and commit after a pause, the edit
// written seconds before the commit, as a real agent's are (without it every worktree's
// files and index are written in one second, so git re-hashes each file to be sure).
// Three reviews each run: warm (every cache kept), cold (the counts' and branches' caches removed) and after the
// agents' ends (the caches removed, then each agent's count kept as its end keeps it; the branch reads cold).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, median, percentile, round } from './lib.mjs';

const dist = (p) => new URL(`../dist/${p}`, import.meta.url).href;
const ID = {
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'b@bench',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'b@bench',
};

export async function runReviewBench({ agents = 50, runs = 15, timeline = false } = {}) {
  const [{ layoutFor, ensureState }, { createRecord, listRecords }, { reviewWork }, { keepCountAtEnd }] =
    await Promise.all([
      import(dist('layout/layout.js')),
      import(dist('fleet/registry.js')),
      import(dist('work/review.js')),
      import(dist('work/work.js')),
    ]);
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-bench-review-')));
  const env = { ...process.env, ...ID };
  const git = (cwd, ...a) => execFileSync('git', ['-C', cwd, ...a], { env, encoding: 'utf8' }).trim();
  try {
    git(dir, 'init', '-q', '-b', 'main');
    // A project of some size: 200 files, so a diff has a tree to walk.
    for (let i = 0; i < 200; i++) writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`.repeat(20));
    writeFileSync(join(dir, '.gitignore'), '.flotilla/\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'init');
    const base = git(dir, 'rev-parse', 'HEAD');
    const layout = layoutFor(join(dir, '.flotilla'), dir);
    ensureState(layout);
    const now = new Date().toISOString();
    const ids = Array.from({ length: agents }, (_, k) => `w${k}`);
    for (const id of ids) git(dir, 'worktree', 'add', '-q', '-b', `flotilla/${id}`, layout.worktree(id), 'main');
    if (timeline) await new Promise((r) => setTimeout(r, 2100));
    for (let k = 0; k < agents; k++) {
      const id = ids[k];
      const wt = layout.worktree(id);
      writeFileSync(join(wt, `f${k}.txt`), `changed by ${id}\n`);
      if (timeline) {
        const t = Date.now() / 1000 - 5;
        utimesSync(join(wt, `f${k}.txt`), t, t);
      }
      git(wt, 'commit', '-q', '-am', `work ${id}`);
      createRecord(layout, {
        id,
        name: 'bench',
        parentId: null,
        rootId: id,
        depth: 0,
        pid: null,
        pidStartTime: null,
        tmux: null,
        cwd: wt,
        worktree: wt,
        base: { branch: 'main', commit: base },
        mode: 'oneshot',
        status: 'completed',
        exitReason: 'completed',
        createdAt: now,
        startedAt: now,
        finishedAt: now,
        turns: 1,
        maxTurns: 20,
        timeoutSecs: 600,
        usage: { inputTokens: 0, outputTokens: 0, costUsd: null },
        lastLine: '',
        model: 'script:bench.yaml',
        scripted: true,
        permissionMode: 'dont_ask',
        effectivePolicy: { tools: [], permissionMode: 'dont_ask', secrets: [] },
        background: false,
        resumedFrom: null,
        spawnedBy: 'human',
      });
    }
    const forget = () => {
      for (const f of [layout.worktreeStatusCache, layout.reviewBranchCache])
        rmSync(f, { recursive: true, force: true });
    };
    const review = async (mode = 'warm') => {
      // Cold: without the caches of worktrees' counts and branch states, as after agents
      // finished: every worktree gets its `git status`, the branches their history reads.
      if (mode !== 'warm') forget();
      // After agents ended: each agent's end kept its worktree's count (lifecycle/completion.ts), untimed here as
      // it is paid by the agent, not the person; the branch states are still cold (their tips moved).
      if (mode === 'ended') for (const rec of listRecords(layout)) await keepCountAtEnd(layout, rec);
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [CLI, 'review', '--json'], { cwd: dir, env, encoding: 'utf8' });
      const ms = performance.now() - t0;
      if (r.status !== 0) throw new Error(`review failed: ${r.stderr}`);
      const rows = JSON.parse(r.stdout);
      if (rows.length !== agents) throw new Error(`review listed ${rows.length} agents, not ${agents}`);
      return ms;
    };
    const plainGit = () => {
      const t0 = performance.now();
      const refs = spawnSync('git', ['-C', dir, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/flotilla/'], {
        encoding: 'utf8',
      })
        .stdout.split('\n')
        .filter(Boolean);
      for (const b of refs) spawnSync('git', ['-C', dir, 'diff', '--shortstat', `main...${b}`], { encoding: 'utf8' });
      if (refs.length !== agents) throw new Error(`for-each-ref listed ${refs.length} branches`);
      return performance.now() - t0;
    };
    // The same work without the CLI's start: what review itself costs.
    const inProcess = async () => {
      const t0 = performance.now();
      const rows = await reviewWork(layout, listRecords(layout));
      if (rows.length !== agents) throw new Error(`reviewWork listed ${rows.length} agents`);
      return performance.now() - t0;
    };
    const start = () => {
      const t0 = performance.now();
      spawnSync(process.execPath, [CLI, '--version'], { env, stdio: 'ignore' });
      return performance.now() - t0;
    };
    await review();
    plainGit();
    await inProcess();
    const r = [];
    const c = [];
    const e = [];
    const g = [];
    const w = [];
    const v = [];
    for (let i = 0; i < runs; i++) {
      r.push(await review());
      c.push(await review('cold'));
      e.push(await review('ended'));
      g.push(plainGit());
      w.push(await inProcess());
      v.push(start());
    }
    return {
      agents,
      runs,
      review_p50_ms: round(median(r)),
      review_p90_ms: round(percentile(r, 90)),
      git_p50_ms: round(median(g)),
      git_p90_ms: round(percentile(g, 90)),
      ratio_p50: round(median(r) / median(g), 2),
      review_cold_p50_ms: round(median(c)),
      cold_ratio_p50: round(median(c) / median(g), 2),
      review_after_ends_p50_ms: round(median(e)),
      after_ends_ratio_p50: round(median(e) / median(g), 2),
      review_in_process_p50_ms: round(median(w)),
      in_process_ratio_p50: round(median(w) / median(g), 2),
      cli_version_p50_ms: round(median(v)),
      timeline,
      load_average: loadavg().map((x) => round(x, 1)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  console.log(JSON.stringify(await runReviewBench({ timeline: process.argv.includes('--timeline') }), null, 2));
