// §14: what one spawn costs Flotilla before the agent runs, build against build. Per spawn: the
// spawn-agent process (wall, and CPU from perf or /usr/bin/time), and its harness's own start from
// FLOTILLA_TRACE marks (src/trace.ts): from the harness process's start to `shim: CLI started` (a
// vendor CLI exec'd) or `harness: agent started` (the in-process harness), wall and CPU. Real tmux
// on a private server per build, a warm fleet per build (one spawn first: caches written), runs
// interleaved (run i of every build before run i+1 of any), the load average of each run.
//   node bench/spawn-start.mjs [--pairs 6] [--runtime flotilla|claude] [--warm flotilla|claude] [--compare <main.js>]
//     [--repo 1]
// --repo: the project is a git repository with a commit (each spawn then makes its in-place branch).
// --warm: the runtime of the first spawn, whose harness writes the code cache the others read.
// A `claude` agent gets an unreachable API address: its CLI is exec'd, then cancelled.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, median, round, tempProject, timeRun, tmuxKill } from './lib.mjs';
import { timeCpu } from './scale.mjs';

const WORKER = fileURLToPath(new URL('../test/fixtures/spawn/worker.yaml', import.meta.url));

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}

const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One build's fleet: a project, a tmux server, the environment its spawns get. */
function fleetFor(cli, k, runtime, warm) {
  const p = tempProject('flotilla-bench-start-');
  // --repo: the project a git repository with a commit, so each spawn makes its in-place branch (work/in-place.ts).
  if (arg('repo', null) !== null) {
    rmSync(join(p.dir, '.git'), { recursive: true });
    const g = (...a) => execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', ...a], { cwd: p.dir });
    g('init', '-q');
    g('commit', '-q', '--allow-empty', '-m', 'bench');
  }
  const socket = `flotilla-bench-start-${process.pid}-${k}`;
  mkdirSync(join(p.root, 'agents'), { recursive: true });
  const def = (r) => (r === 'claude' ? 'runtime: claude\n' : `model: script:${WORKER}\n`);
  for (const [name, r] of [
    ['bench', runtime],
    ['warm', warm],
  ])
    writeFileSync(
      join(p.root, 'agents', `${name}.md`),
      `---\nname: ${name}\ndescription: bench\n${def(r)}---\nYou are ${name}.\n`,
    );
  const bin = join(dirname(cli), '..', '..', 'node_modules', '.bin');
  const env = {
    PATH: `${bin}:${process.env.PATH}`,
    HOME: join(p.dir, 'home'),
    XDG_CACHE_HOME: join(p.dir, 'cache'),
    LANG: 'C.UTF-8',
    FLOTILLA_ROOT: p.root,
    FLOTILLA_TMUX_SOCKET: socket,
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    ANTHROPIC_API_KEY: 'sk-ant-api03-fake-key-for-an-unreachable-server-0123456789',
  };
  mkdirSync(env.HOME, { recursive: true });
  return { p, socket, env, cli };
}

/** The harness's marks in a trace file: its start (origin), and the mark that ends its start. */
function harnessStart(traceFile, end) {
  let lines;
  try {
    lines = readFileSync(traceFile, 'utf8').trim().split('\n').filter(Boolean).map(JSON.parse);
  } catch {
    return null;
  }
  const start = lines.find((l) => l.span === 'harness: start');
  const done = start && lines.find((l) => l.pid === start.pid && l.span === end);
  return done ? { wall: done.t - done.origin, cpu: done.cpu } : null;
}

async function oneSpawn(f, i, end, agent = 'bench') {
  const trace = join(f.p.dir, `trace-${i}.jsonl`);
  const id = `b${i}`;
  const env = { ...f.env, FLOTILLA_TRACE: trace };
  const load = loadAverage();
  const spawn = timeCpu(process.execPath, [f.cli, 'spawn', '--oneshot', '--agent', agent, '--id', id, 'do it'], {
    cwd: f.p.dir,
    env,
  });
  let harness = null;
  for (let t = 0; t < 600 && !harness; t++) {
    harness = harnessStart(trace, end);
    if (!harness) await sleep(50);
  }
  timeRun(process.execPath, [f.cli, 'cancel', id], { cwd: f.p.dir, env, allowFail: true });
  return { spawn, harness, load };
}

async function main() {
  const pairs = Number(arg('pairs', '6'));
  const runtime = arg('runtime', 'flotilla');
  const end = runtime === 'claude' ? 'shim: CLI started' : 'harness: agent started';
  const clis = [CLI, ...(arg('compare', '') ? arg('compare', '').split(',') : [])];
  // The first spawn's runtime (default: the same): its harness writes the code cache the others read.
  const warm = arg('warm', runtime);
  const fleets = clis.map((cli, k) => fleetFor(cli, k, runtime, warm));
  const samples = clis.map(() => []);
  try {
    for (const f of fleets)
      await oneSpawn(f, 'warm', warm === 'claude' ? 'shim: CLI started' : 'harness: agent started', 'warm');
    for (let i = 0; i < pairs; i++) for (const [k, f] of fleets.entries()) samples[k].push(await oneSpawn(f, i, end));
  } finally {
    for (const f of fleets) {
      tmuxKill(f.socket);
      f.p.cleanup();
    }
  }
  const pick = (s, fn) => round(median(s.map(fn).filter((v) => Number.isFinite(v))));
  const rows = clis.map((cli, k) => {
    const s = samples[k];
    return {
      cli,
      'spawn-agent wall': pick(s, (r) => r.spawn.wall),
      'spawn-agent cpu': pick(s, (r) => r.spawn.cpu),
      [`harness to '${end}' wall`]: pick(s, (r) => r.harness?.wall ?? NaN),
      [`harness to '${end}' cpu`]: pick(s, (r) => r.harness?.cpu ?? NaN),
      'harness marks missing': s.filter((r) => !r.harness).length,
      load: [Math.min(...s.map((r) => r.load)), Math.max(...s.map((r) => r.load))],
    };
  });
  // Per pair: run i of this build over run i of the first one.
  const ratios = clis.slice(1).map((_, j) => {
    const [a, b] = [samples[0], samples[j + 1]];
    const r = (fn) => round(median(a.map((x, i) => fn(b[i]) / fn(x)).filter((v) => Number.isFinite(v))), 2);
    return {
      'spawn-agent cpu': r((x) => x.spawn.cpu),
      'spawn-agent wall': r((x) => x.spawn.wall),
      'harness cpu': r((x) => x.harness?.cpu ?? NaN),
      'harness wall': r((x) => x.harness?.wall ?? NaN),
    };
  });
  console.log(JSON.stringify({ runtime, warm, pairs, rows, 'pair ratios (compare / first)': ratios }, null, 2));
}

await main();
