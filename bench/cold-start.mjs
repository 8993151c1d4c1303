// §14: cold start of `flotilla status` / `send` / `spawn-agent` against `node -e 0`, and
// issue 4's time from `flotilla run` start to its first model call (scripted model).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, SPAWN_AGENT, median, round, tempProject, timeRun, tmuxKill } from './lib.mjs';

export function runColdStartBench({ runs = 10 } = {}) {
  const p = tempProject();
  const socket = `flotilla-bench-${process.pid}`;
  const env = { ...process.env, FLOTILLA_ROOT: p.root, FLOTILLA_TMUX_SOCKET: socket, FLOTILLA_LIMITS_MAX_RUNNING: '64', FLOTILLA_LIMITS_MAX_SPAWNS_PER_TREE: '1000' };
  delete env.TMUX;
  delete env.FLOTILLA_AGENT_ID;
  const script = join(p.dir, 'done.yaml');
  writeFileSync(script, 'replies:\n  - text: "done"\n');
  const opts = { cwd: p.dir, env };
  try {
    // Warm the file cache once so every command is measured alike.
    timeRun(process.execPath, [CLI, 'send', 'human', 'warm-up'], opts);
    const cases = {
      'node -e 0': () => timeRun(process.execPath, ['-e', '0'], opts),
      'flotilla --version': () => timeRun(process.execPath, [CLI, '--version'], opts),
      'flotilla status': () => timeRun(process.execPath, [CLI, 'status'], opts),
      'flotilla send': () => timeRun(process.execPath, [CLI, 'send', 'human', 'hello'], opts),
      'spawn-agent --background (to exit)': () => timeRun(SPAWN_AGENT, ['--background', '--oneshot', '--model', `script:${script}`, 'say done'], opts),
      'spawn-agent in tmux (to exit)': () => timeRun(SPAWN_AGENT, ['--oneshot', '--model', `script:${script}`, 'say done'], opts),
    };
    const result = {};
    for (const [name, fn] of Object.entries(cases)) {
      const samples = [];
      for (let i = 0; i < runs; i++) samples.push(fn());
      result[name] = round(median(samples));
    }
    const base = result['node -e 0'];
    const ratios = Object.fromEntries(Object.entries(result).filter(([k]) => k !== 'node -e 0').map(([k, v]) => [k, round(v / base, 2)]));

    // flotilla run → first model call: the scripted model logs the wall clock of each call.
    const firstCall = [];
    for (let i = 0; i < runs; i++) {
      const log = join(p.dir, `calls-${i}.jsonl`);
      const t0 = Date.now();
      timeRun(process.execPath, [CLI, 'run', '--model', `script:${script}`, 'say done'], { ...opts, env: { ...env, FLOTILLA_SCRIPT_LOG: log } });
      const first = JSON.parse(readFileSync(log, 'utf8').split('\n')[0]);
      firstCall.push(first.ts - t0);
    }
    return { runs, median_ms: result, ratio_to_node: ratios, run_to_first_model_call_ms: { median: round(median(firstCall)), samples: firstCall } };
  } finally {
    tmuxKill(socket);
    p.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(runColdStartBench(), null, 2));
}
