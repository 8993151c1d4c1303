// §14: cold start of `flotilla status` / `send` / `spawn-agent` against `node -e 0`, and
// The time from `flotilla run` start to its first model call (scripted model).
//   node bench/cold-start.mjs [--runs 10] [--repo /other/checkout]   (A/B: both built)
// Wall time and CPU time (perf task-clock, else user+sys) are both reported: on a machine
// others share, CPU moves much less with their load than wall time does. NODE_EXTRA_CA_CERTS
// is removed from the environment: when set (as on the machine these figures come from), every
// Node process parses the certificate bundle at start, ~100 ms that is no part of Flotilla and
// that made `node -e 0` — the floor the ratios divide by — look three times slower.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, SPAWN_AGENT, median, round, tempProject, timeRun, tmuxKill } from './lib.mjs';
import { timeCpu } from './scale.mjs';

export function runColdStartBench({ runs = 10, repo } = {}) {
  const cli = repo ? join(repo, 'dist', 'cli', 'main.js') : CLI;
  const spawnAgent = repo ? join(repo, 'tools', 'spawn-agent') : SPAWN_AGENT;
  const p = tempProject();
  const socket = `flotilla-bench-${process.pid}`;
  const env = {
    ...process.env,
    FLOTILLA_ROOT: p.root,
    FLOTILLA_TMUX_SOCKET: socket,
    FLOTILLA_LIMITS_MAX_RUNNING: '64',
    FLOTILLA_LIMITS_MAX_SPAWNS_PER_TREE: '1000',
  };
  delete env.TMUX;
  delete env.FLOTILLA_AGENT_ID;
  delete env.NODE_EXTRA_CA_CERTS;
  const script = join(p.dir, 'done.yaml');
  writeFileSync(script, 'replies:\n  - text: "done"\n');
  const opts = { cwd: p.dir, env };
  try {
    // Warm the file cache once so every command is measured alike.
    timeRun(process.execPath, [cli, 'send', 'human', 'warm-up'], opts);
    const cases = {
      'node -e 0': () => timeCpu(process.execPath, ['-e', '0'], opts),
      'flotilla --version': () => timeCpu(process.execPath, [cli, '--version'], opts),
      'flotilla status': () => timeCpu(process.execPath, [cli, 'status'], opts),
      'flotilla send': () => timeCpu(process.execPath, [cli, 'send', 'human', 'hello'], opts),
      'spawn-agent --background (to exit)': () =>
        timeCpu(spawnAgent, ['--background', '--oneshot', '--model', `script:${script}`, 'say done'], opts),
      'spawn-agent in tmux (to exit)': () =>
        timeCpu(spawnAgent, ['--oneshot', '--model', `script:${script}`, 'say done'], opts),
    };
    // Interleaved: a burst of load from elsewhere hits every command alike.
    const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let i = 0; i < runs; i++) for (const [name, fn] of Object.entries(cases)) samples[name].push(fn());
    const wall = Object.fromEntries(Object.entries(samples).map(([k, s]) => [k, round(median(s.map((x) => x.wall)))]));
    const cpu = Object.fromEntries(Object.entries(samples).map(([k, s]) => [k, round(median(s.map((x) => x.cpu)))]));
    const ratios = (t) =>
      Object.fromEntries(
        Object.entries(t)
          .filter(([k]) => k !== 'node -e 0')
          .map(([k, v]) => [k, round(v / t['node -e 0'], 2)]),
      );

    // flotilla run → first model call: the scripted model logs the wall clock of each call.
    const firstCall = [];
    for (let i = 0; i < runs; i++) {
      const log = join(p.dir, `calls-${i}.jsonl`);
      const t0 = Date.now();
      timeRun(process.execPath, [cli, 'run', '--model', `script:${script}`, 'say done'], {
        ...opts,
        env: { ...env, FLOTILLA_SCRIPT_LOG: log },
      });
      const first = JSON.parse(readFileSync(log, 'utf8').split('\n')[0]);
      firstCall.push(first.ts - t0);
    }
    return {
      runs,
      cli,
      load_average: loadAverage(),
      median_ms: wall,
      ratio_to_node: ratios(wall),
      cpu_ms: cpu,
      cpu_ratio_to_node: ratios(cpu),
      run_to_first_model_call_ms: { median: round(median(firstCall)), samples: firstCall },
    };
  } finally {
    tmuxKill(socket);
    p.cleanup();
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
      runColdStartBench({
        ...(arg('--runs') ? { runs: Number(arg('--runs')) } : {}),
        ...(arg('--repo') ? { repo: arg('--repo') } : {}),
      }),
      null,
      2,
    ),
  );
}
