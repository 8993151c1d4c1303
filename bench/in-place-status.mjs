// `flotilla status` with N in-place agents that committed (docs/benchmarks-work.md, "status with
// in-place agents"), CPU and wall, each case side by side with `node -e 0` in interleaved rounds
// (run i of every case before run i+1 of any), as bench/hot-commands.mjs. Cases: `new` — every
// agent has two commits not yet in the repository (its branch reset before each run, untimed),
// counted for the first time (the counts kept by an earlier refresh deleted) or counted before;
// `steady` — nothing new since the last import. With `--compare <other dist/cli/main.js>` the
// same cases run with that build too (A/B: each built).
//   node bench/in-place-status.mjs [--agents 1,10] [--pairs 10] [--compare /other/dist/cli/main.js]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, median, round } from './lib.mjs';
import { timeCpu } from './scale.mjs';

const dist = (p) => new URL(`../dist/${p}`, import.meta.url).href;
const ID = { GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };

export async function runInPlaceStatusBench({ agents = 1, pairs = 10, compare = [] } = {}) {
  const [{ layoutFor, ensureState }, { createRecord }, { addInPlaceBranch }, { importInPlaceBranches }] =
    await Promise.all([
      import(dist('layout/layout.js')),
      import(dist('fleet/registry.js')),
      import(dist('work/in-place.js')),
      import(dist('work/import-branch.js')),
    ]);
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-bench-inplace-')));
  const env = { ...process.env, ...ID, FLOTILLA_ROOT: join(dir, '.flotilla') };
  for (const k of ['TMUX', 'FLOTILLA_AGENT_ID', 'FLOTILLA_DOOR', 'NODE_EXTRA_CA_CERTS']) delete env[k];
  const git = (cwd, args, extra = {}) =>
    execFileSync('git', ['-C', cwd, ...args], { env: { ...env, ...extra }, encoding: 'utf8' }).trim();
  try {
    git(dir, ['init', '-q', '-b', 'main']);
    for (let i = 0; i < 200; i++) writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`.repeat(20));
    writeFileSync(join(dir, '.gitignore'), '.flotilla/\n');
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', 'init']);
    const layout = layoutFor(join(dir, '.flotilla'), dir);
    ensureState(layout);
    const now = new Date().toISOString();
    const ids = Array.from({ length: agents }, (_, k) => `p${k}`);
    const tips = {};
    let base;
    for (const id of ids) {
      base = await addInPlaceBranch(layout, id, dir);
      // Its two commits, written into its own git dir as its sandboxed git would (the
      // repository's objects read as an alternate, as the sandbox binds them).
      const own = layout.inPlaceGitDir(id);
      const as = { GIT_DIR: own, GIT_WORK_TREE: dir, GIT_ALTERNATE_OBJECT_DIRECTORIES: join(dir, '.git', 'objects') };
      for (const n of [1, 2]) {
        writeFileSync(join(dir, `${id}-${n}.txt`), `${id} ${n}\n`);
        git(dir, ['add', `${id}-${n}.txt`], as);
        git(dir, ['commit', '-q', '-m', `${id} ${n}`], as);
      }
      tips[id] = git(dir, ['rev-parse', 'HEAD'], as);
      createRecord(layout, {
        ...{ id, name: 'bench', parentId: null, rootId: id, depth: 0, pid: null, pidStartTime: null, tmux: null },
        ...{ cwd: dir, worktree: null, base, mode: 'oneshot', status: 'completed', exitReason: 'completed' },
        ...{ createdAt: now, startedAt: now, finishedAt: now, turns: 1, maxTurns: 20, timeoutSecs: 600 },
        ...{ usage: { inputTokens: 0, outputTokens: 0, costUsd: null }, lastLine: '', model: 'script:b.yaml' },
        ...{ scripted: true, permissionMode: 'dont_ask', background: false, resumedFrom: null, spawnedBy: 'human' },
        effectivePolicy: { tools: [], permissionMode: 'dont_ask', secrets: [] },
      });
    }
    const setRefs = (to) => {
      for (const id of ids) git(dir, ['update-ref', `refs/heads/flotilla/${id}`, to(id)]);
    };
    const opts = { cwd: dir, env };
    const status = (cli) => () => {
      const r = timeCpu(process.execPath, [cli, 'status'], opts);
      return r;
    };
    const clis = [['', CLI], ...compare.map((c, i) => [`[${i + 1}] `, c])];
    // The rows say what the person sees: ahead 2 for each.
    const shown = JSON.parse(execFileSync(process.execPath, [CLI, 'status', '--json'], { ...opts, encoding: 'utf8' }));
    const ahead = shown.filter((r) => r.work?.ahead === 2).length;
    if (ahead !== agents) throw new Error(`status showed ${ahead} agents 2 ahead, not ${agents}`);
    // Brought in once (as at a task's end), so `steady` can set the branches to the tips.
    const failed = await importInPlaceBranches(
      layout,
      ids.map((id) => ({ id, branch: `flotilla/${id}` })),
    );
    if (failed.size) throw new Error(`import failed: ${[...failed.values()].join('; ')}`);
    const cases = { 'node -e 0': () => timeCpu(process.execPath, ['-e', '0'], opts) };
    for (const [tag, cli] of clis) {
      // The first refresh to see the agents' tips counts them; the next ones find the counts kept.
      cases[`${tag}status, new commits, first count`] = () => {
        setRefs(() => base.commit);
        rmSync(layout.inPlaceStandingCache, { force: true });
        return status(cli)();
      };
      cases[`${tag}status, new commits, counted before`] = () => {
        setRefs(() => base.commit);
        return status(cli)();
      };
      cases[`${tag}status, steady`] = () => {
        setRefs((id) => tips[id]);
        return status(cli)();
      };
    }
    const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    const load = [loadavg()[0]];
    for (let i = 0; i < pairs; i++) for (const [name, fn] of Object.entries(cases)) samples[name].push(fn());
    load.push(loadavg()[0]);
    const floor = samples['node -e 0'];
    const row = (s) => ({
      cpu_ms: round(median(s.map((x) => x.cpu))),
      wall_ms: round(median(s.map((x) => x.wall))),
      cpu_over_node: round(median(s.map((x, i) => x.cpu / floor[i].cpu)), 2),
    });
    return {
      agents,
      pairs,
      clis: Object.fromEntries(clis.map(([t, c]) => [t.trim() || 'this', c])),
      cases: Object.fromEntries(Object.entries(samples).map(([k, s]) => [k, row(s)])),
      load_average_before_after: load.map((x) => round(x, 1)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const arg = (name, d) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : d;
  };
  const compare = arg('--compare', '')?.split(',').filter(Boolean) ?? [];
  for (const agents of arg('--agents', '1,10').split(',').map(Number))
    console.log(
      JSON.stringify(await runInPlaceStatusBench({ agents, pairs: Number(arg('--pairs', '10')), compare }), null, 2),
    );
}
