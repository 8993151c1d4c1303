// §14: a new fleet's first config read (cold config cache): the read alone in a fresh process,
// the first `flotilla status`, and a `spawn-agent --background`, each in a new fleet with no
// config file and with a small one, this build against another built checkout, interleaved.
//   node bench/config-read.mjs --repo /other/checkout [--runs 8]
// Wall and CPU ms (perf task-clock, else user+sys), medians, with the load average of each run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, round, tempProject } from './lib.mjs';
import { timeCpu } from './scale.mjs';

const HERE = fileURLToPath(new URL('..', import.meta.url));
const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

/** The read alone: the built cached.js, as every command's first step. */
const READ = (repo) =>
  [
    `import { loadConfigCached } from ${JSON.stringify(pathToFileURL(join(repo, 'dist/config/cached.js')).href)};`,
    `import { layoutFor } from ${JSON.stringify(pathToFileURL(join(repo, 'dist/layout/layout.js')).href)};`,
    'await loadConfigCached(layoutFor(process.argv[1], process.argv[2]));',
  ].join('\n');

const CASES = {
  'config read alone': (repo, p) => [process.execPath, ['--input-type=module', '-e', READ(repo), p.root, p.dir]],
  'flotilla status': (repo) => [process.execPath, [join(repo, 'dist/cli/main.js'), 'status']],
  // A provider model, not a script: the scripted model's own checks load zod (model/scripted/script.ts).
  // Its harness (a child, not counted) fails its first request fast: the key is a dummy, the URL closed.
  'spawn-agent --background': (repo) => [
    join(repo, 'tools/spawn-agent'),
    ['--background', '--oneshot', '--model', 'anthropic:claude-sonnet-4-5', 'say done'],
  ],
};

const CONFIGS = { 'no config file': null, 'small config file': 'limits:\n  max_depth: 4\n  max_running: 6\n' };

/**
 * One run in a new fleet: a fresh project, so its config is not cached yet. The home is kept per
 * build (`home`), so V8's code cache of the fast commands is warm, as on a machine Flotilla ran on.
 */
function once(repo, kase, config, home) {
  const p = tempProject('flotilla-config-read-');
  try {
    // A fleet that exists (so `status` reads its config) but has cached nothing yet.
    mkdirSync(join(p.root, 'state', 'agents'), { recursive: true });
    if (config !== null) writeFileSync(join(p.root, 'config.yaml'), config);
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      FLOTILLA_ROOT: p.root,
      ANTHROPIC_API_KEY: 'sk-ant-bench-dummy',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    };
    const [cmd, args] = CASES[kase](repo, p);
    const load = loadAverage();
    const sample = { ...timeCpu(cmd, args, { cwd: p.dir, env }), load };
    harnessesGone(p.root);
    return sample;
  } finally {
    p.cleanup();
  }
}

/** Waits (up to 20 s) for a spawned harness to end its record and exit: it would write into a removed fleet. */
function harnessesGone(root) {
  const dir = join(root, 'state', 'agents');
  const end = Date.now() + 20_000;
  const live = () =>
    (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : []).some((f) => {
      try {
        const { status, pid } = JSON.parse(readFileSync(join(dir, f), 'utf8'));
        if (!['completed', 'failed', 'cancelled'].includes(status)) return true;
        if (pid) process.kill(pid, 0);
        return !!pid;
      } catch {
        return false;
      }
    });
  while (live() && Date.now() < end) spawnSync('sleep', ['0.1']);
}

export function runConfigReadBench({ runs = 8, repo }) {
  const repos = { before: repo, after: HERE };
  const homes = { before: tempProject('flotilla-config-home-'), after: tempProject('flotilla-config-home-') };
  for (const side of ['before', 'after']) mkdirSync(join(homes[side].dir, '.config'), { recursive: true });
  try {
    // One of each first, not counted: it writes the code caches the runs then read.
    for (const side of ['before', 'after'])
      for (const kase of Object.keys(CASES)) once(repos[side], kase, null, homes[side].dir);
    return measure(repos, homes, runs);
  } finally {
    for (const h of Object.values(homes)) h.cleanup();
  }
}

function measure(repos, homes, runs) {
  const out = {};
  for (const [kase] of Object.entries(CASES))
    for (const config of Object.keys(CONFIGS)) {
      const samples = { before: [], after: [] };
      // Interleaved: run i of before, then run i of after, so a burst of load hits both alike.
      for (let i = 0; i < runs; i++)
        for (const side of ['before', 'after'])
          samples[side].push(once(repos[side], kase, CONFIGS[config], homes[side].dir));
      const stat = (side, key) => round(median(samples[side].map((s) => s[key])));
      const pairs = samples.after.map((a, i) => a.cpu / samples.before[i].cpu);
      const loads = [...samples.before, ...samples.after].map((s) => s.load);
      out[`${kase}, ${config}`] = {
        cpu_ms: { before: stat('before', 'cpu'), after: stat('after', 'cpu') },
        wall_ms: { before: stat('before', 'wall'), after: stat('after', 'wall') },
        cpu_ratio_per_pair_median: round(median(pairs), 2),
        load_average: [Math.min(...loads), Math.max(...loads)],
      };
    }
  return { runs, when: new Date().toISOString(), results: out };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const arg = (flag) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : args[i + 1];
  };
  if (!arg('--repo')) throw new Error('usage: node bench/config-read.mjs --repo /other/checkout [--runs 8]');
  const r = runConfigReadBench({ repo: arg('--repo'), ...(arg('--runs') ? { runs: Number(arg('--runs')) } : {}) });
  console.log(JSON.stringify(r, null, 2));
}
