// §14: the commands agents run constantly — `flotilla send`, `status`, `task list` — from a
// shell, each taken side by side with `node -e 0` (the floor its ratio divides by): run i of
// every case comes before run i+1 of any, so a burst of load from the machine's other work
// hits every case alike. `send` is taken twice: `node main.js send`, and `tools/flotilla send`,
// the sh wrapper a shell finds on PATH (it execs the `node` on PATH). Reports wall and CPU
// medians, their ratios, the median of the per-pair ratios (run i of a case over run i of
// `node -e 0`: the figure least moved by load that comes and goes) and the load average.
//   node bench/hot-commands.mjs [--pairs 15] [--compare /other/dist/cli/main.js,…]   (A/B: each built)
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, median, round, tempProject, timeRun } from './lib.mjs';
import { timeCpu } from './scale.mjs';

export function runHotCommandsBench({ pairs = 15, compare = [] } = {}) {
  // The sends get a fleet of their own: mail piling up in the human's inbox would make every
  // later `status` (which counts unread mail) slower than the one before.
  const p = tempProject();
  const sends = tempProject();
  const env = { ...process.env, FLOTILLA_ROOT: p.root };
  delete env.TMUX;
  delete env.FLOTILLA_AGENT_ID;
  delete env.FLOTILLA_DOOR;
  // Parsed by every Node process at start when set: no part of Flotilla (bench/cold-start.mjs).
  delete env.NODE_EXTRA_CA_CERTS;
  const opts = { cwd: p.dir, env };
  const sendOpts = { cwd: sends.dir, env: { ...env, FLOTILLA_ROOT: sends.root } };
  const clis = [['', CLI], ...compare.map((c, i) => [`[${i + 1}] `, c])];
  try {
    const cases = { 'node -e 0': () => timeCpu(process.execPath, ['-e', '0'], opts) };
    for (const [tag, cli] of clis) {
      // Warm the file cache and make the fleet root and the board, so every run finds them.
      timeRun(process.execPath, [cli, 'send', 'human', 'warm-up'], sendOpts);
      timeRun(process.execPath, [cli, 'status'], opts);
      timeRun(process.execPath, [cli, 'task', 'list'], opts);
      cases[`${tag}flotilla send`] = () => timeCpu(process.execPath, [cli, 'send', 'human', 'hello'], sendOpts);
      // The checkout's wrapper beside its dist/.
      const wrapper = join(dirname(cli), '..', '..', 'tools', 'flotilla');
      cases[`${tag}tools/flotilla send`] = () => timeCpu(wrapper, ['send', 'human', 'hello'], sendOpts);
      cases[`${tag}flotilla status`] = () => timeCpu(process.execPath, [cli, 'status'], opts);
      cases[`${tag}flotilla task list`] = () => timeCpu(process.execPath, [cli, 'task', 'list'], opts);
    }
    const load = [loadAverage()];
    const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let i = 0; i < pairs; i++) for (const [name, fn] of Object.entries(cases)) samples[name].push(fn());
    load.push(loadAverage());
    const of = (pick) => Object.fromEntries(Object.entries(samples).map(([k, s]) => [k, round(median(s.map(pick)))]));
    const ratios = (t) =>
      Object.fromEntries(
        Object.entries(t)
          .filter(([k]) => k !== 'node -e 0')
          .map(([k, v]) => [k, round(v / t['node -e 0'], 2)]),
      );
    const wall = of((x) => x.wall);
    const cpu = of((x) => x.cpu);
    const pairRatios = (pick) =>
      Object.fromEntries(
        Object.entries(samples)
          .filter(([k]) => k !== 'node -e 0')
          .map(([k, s]) => [k, round(median(s.map((x, i) => pick(x) / pick(samples['node -e 0'][i]))), 2)]),
      );
    return {
      pairs,
      clis: Object.fromEntries(clis.map(([tag, cli]) => [tag.trim() || 'this', cli])),
      load_average_before_after: load,
      median_ms: wall,
      ratio_to_node: ratios(wall),
      pair_ratio_p50: pairRatios((x) => x.wall),
      cpu_ms: cpu,
      cpu_ratio_to_node: ratios(cpu),
      cpu_pair_ratio_p50: pairRatios((x) => x.cpu),
    };
  } finally {
    p.cleanup();
    sends.cleanup();
  }
}

function loadAverage() {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const arg = (flag) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : args[i + 1];
  };
  console.log(
    JSON.stringify(
      runHotCommandsBench({
        ...(arg('--pairs') ? { pairs: Number(arg('--pairs')) } : {}),
        ...(arg('--compare') ? { compare: arg('--compare').split(',') } : {}),
      }),
      null,
      2,
    ),
  );
}
