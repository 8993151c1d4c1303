// Cost against the fleet's history (docs/decisions.md has the why). For N = 10, 1,000 and 5,000 finished agent
// records (with transcripts, sidecars and outputs, as a long-lived fleet keeps them), the
// median of `flotilla status`, `spawn-agent` (to exit), the first frame of `flotilla watch`,
// and delivery → the model seeing it in a live agent (p50 / p99), each also as a ratio to
// `node -e 0` measured in the same run. Run: node bench/scale.mjs [--sizes 10,1000] [--runs 5]
// Only the dashboard, optionally A/B against another build's dist/cli/main.js, interleaved:
// node bench/scale.mjs --only watch [--compare /other/dist/cli/main.js[,/another/dist/cli/main.js]]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, SPAWN_AGENT, median, percentile, round, tempProject, timeRun, tmuxKill } from './lib.mjs';

const DIST = new URL('../dist/', import.meta.url);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Writes `n` finished agents: trees of five (a root and four children), as `flotilla gc` would find them. */
export function populate(root, n, { at = Date.now() - 86_400_000 } = {}) {
  const dirs = ['agents', 'transcripts', 'output', 'children'].map((d) => join(root, 'state', d));
  for (const d of dirs) mkdirSync(d, { recursive: true });
  let rootId = '';
  for (let i = 0; i < n; i++) {
    const id = `old${String(i).padStart(6, '0')}`;
    const isRoot = i % 5 === 0;
    if (isRoot) rootId = id;
    const created = new Date(at + i * 1000).toISOString();
    const finished = new Date(at + i * 1000 + 500).toISOString();
    const rec = {
      version: 1,
      id,
      name: 'worker',
      parentId: isRoot ? null : rootId,
      rootId,
      depth: isRoot ? 0 : 1,
      pid: 999_999,
      pidStartTime: '1',
      tmux: null,
      cwd: root,
      worktree: null,
      mode: 'oneshot',
      status: i % 7 === 3 ? 'failed' : 'completed',
      exitReason: null,
      createdAt: created,
      startedAt: created,
      finishedAt: finished,
      turns: 3,
      maxTurns: 20,
      timeoutSecs: 600,
      usage: { inputTokens: 1200, outputTokens: 300, costUsd: null },
      lastLine: `finished task ${i}`,
      model: 'script:bench.yaml',
      scripted: true,
      permissionMode: 'dont_ask',
      effectivePolicy: { tools: ['read', 'shell', 'send_message'], permissionMode: 'dont_ask', secrets: [] },
      background: false,
      resumedFrom: null,
      spawnedBy: isRoot ? 'human' : 'agent',
      task: 1,
      lastTask: { task: 1, status: 'completed', exitReason: null, finishedAt: finished, outputPath: null },
      slot: null,
      collectedAt: null,
    };
    writeFileSync(join(root, 'state', 'agents', `${id}.json`), JSON.stringify(rec, null, 2) + '\n');
    const lines = [
      {
        type: 'header',
        version: 1,
        agent_id: id,
        def_name: 'worker',
        parent_id: rec.parentId,
        model: rec.model,
        cwd: root,
        resumed_from: null,
        seq: 0,
        ts: created,
      },
      { type: 'message', message: { role: 'user', content: `task ${i}` }, seq: 1, ts: created },
      { type: 'message', message: { role: 'assistant', content: `done with task ${i}` }, seq: 2, ts: finished },
      { type: 'end', status: rec.status, exit_reason: null, seq: 3, ts: finished },
    ];
    writeFileSync(
      join(root, 'state', 'transcripts', `${id}.jsonl`),
      lines.map((l) => JSON.stringify(l)).join('\n') + '\n',
    );
    writeFileSync(
      join(root, 'state', 'transcripts', `${id}.meta.json`),
      JSON.stringify({
        agent_id: id,
        agent_name: 'worker',
        def_name: 'worker',
        status: rec.status,
        exit_reason: null,
        started_at: created,
        finished_at: finished,
        resumed_from: null,
        turns_used: 3,
        model: rec.model,
        usage: rec.usage,
      }) + '\n',
    );
    writeFileSync(join(root, 'state', 'output', `${id}.md`), `done with task ${i}\n`);
    if (!isRoot) {
      mkdirSync(join(root, 'state', 'children', rootId), { recursive: true });
      writeFileSync(join(root, 'state', 'children', rootId, id), '');
    }
  }
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

async function until(pred, timeoutMs, what, pollMs = 2) {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const v = pred();
    if (v) return v;
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}

/**
 * Wall and CPU ms of one run. On a machine others share, CPU time moves much less with
 * their load than wall time does, so both are reported: `perf stat` task-clock (ms
 * precision) where perf works, else user + sys from /usr/bin/time (10 ms steps).
 */
const PERF = spawnSync('perf', ['stat', '-x,', '-e', 'task-clock', 'true'], { encoding: 'utf8' }).status === 0;
export function timeCpu(cmd, args, opts) {
  const t0 = performance.now();
  const wrap = PERF
    ? ['perf', ['stat', '-x,', '-e', 'task-clock', cmd, ...args]]
    : ['/usr/bin/time', ['-f', 'cpu %U %S', cmd, ...args]];
  const r = spawnSync(wrap[0], wrap[1], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', ...opts });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  const m = PERF ? /([\d.]+),msec,task-clock/.exec(r.stderr) : /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  return { wall, cpu: !m ? NaN : PERF ? Number(m[1]) : (Number(m[1]) + Number(m[2])) * 1000 };
}

/** ms from `tmux new-window` until the dashboard has drawn its first frame (FLOTILLA_WATCH_STATS). */
async function watchFirstFrame(p, socket, env, i, cli = CLI) {
  const stats = join(p.dir, `watch-${i}-${Math.random().toString(36).slice(2)}.json`);
  const argv = [
    'env',
    `FLOTILLA_ROOT=${p.root}`,
    `FLOTILLA_WATCH_STATS=${stats}`,
    `FLOTILLA_TMUX_SOCKET=${socket}`,
    `XDG_CONFIG_HOME=${env.XDG_CONFIG_HOME}`,
    process.execPath,
    cli,
    'watch',
  ];
  const t0 = performance.now();
  const r = spawnSync('tmux', ['-L', socket, 'new-window', '-d', '-P', '-F', '#{window_id}', '-c', p.dir, ...argv], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`tmux new-window failed: ${r.stderr}`);
  await until(() => readJson(stats)?.renders >= 1, 20_000, 'the first watch frame', 1);
  const ms = performance.now() - t0;
  const { pid } = readJson(stats);
  spawnSync('tmux', ['-L', socket, 'kill-window', '-t', r.stdout.trim()]);
  // Let it exit before the next run, so its last work does not share the CPU with that run.
  await until(
    () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    },
    10_000,
    'the dashboard to exit',
    5,
  ).catch(() => undefined);
  return ms;
}

/**
 * The floor under the first frame: ms from `tmux new-window` until a bare `node -e` has written the same stats file.
 */
async function nodeInWindow(p, socket, env, i) {
  const stats = join(p.dir, `floor-${i}-${Math.random().toString(36).slice(2)}.json`);
  const script =
    'require("fs").writeFileSync(process.env.STATS, JSON.stringify({ renders: 1 })); setTimeout(() => {}, 60000)';
  const argv = ['env', `STATS=${stats}`, process.execPath, '-e', script];
  const t0 = performance.now();
  const r = spawnSync('tmux', ['-L', socket, 'new-window', '-d', '-P', '-F', '#{window_id}', '-c', p.dir, ...argv], {
    encoding: 'utf8',
    env,
  });
  if (r.status !== 0) throw new Error(`tmux new-window failed: ${r.stderr}`);
  await until(() => readJson(stats)?.renders >= 1, 20_000, 'node in a window', 1);
  const ms = performance.now() - t0;
  spawnSync('tmux', ['-L', socket, 'kill-window', '-t', r.stdout.trim()]);
  return ms;
}

/**
 * CPU of `flotilla watch` up to its terminal check, with stdin not a terminal: node, the CLI,
 * config and every module the dashboard loads, then the one-line usage error (exit 2).
 */
function watchLoadCpu(cli, opts) {
  const r = spawnSync('perf', ['stat', '-x,', '-e', 'task-clock', process.execPath, cli, 'watch'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    ...opts,
  });
  const m = /([\d.]+),msec,task-clock/.exec(r.stderr);
  if (r.status !== 2 || !/needs a terminal/.test(r.stderr))
    throw new Error(`flotilla watch without a terminal: exit ${r.status}: ${r.stderr}`);
  return m ? Number(m[1]) : NaN;
}

/**
 * The dashboard alone (`--only watch`): first frame at each N and the CPU of loading the watch
 * path, for this build and, with `compare`, another build's main.js, runs interleaved.
 */
export async function runWatchBench({ sizes = [10, 1000], runs = 7, compare } = {}) {
  // `compare`: other builds' main.js, comma-separated, each reported under its path.
  const builds = { this: CLI, ...Object.fromEntries((compare ? compare.split(',') : []).map((c) => [c, c])) };
  const out = {
    runs,
    builds,
    load_average_at_start: (await import('node:os')).loadavg().map((x) => round(x, 1)),
    sizes: {},
  };
  for (const n of sizes) {
    const p = tempProject('flotilla-bench-watch-');
    const socket = `flotilla-watch-${process.pid}-${n}`;
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      XDG_CONFIG_HOME: join(p.dir, 'xdg'),
      FLOTILLA_ROOT: p.root,
      FLOTILLA_TMUX_SOCKET: socket,
    };
    const opts = { cwd: p.dir, env };
    try {
      populate(p.root, n);
      spawnSync('tmux', ['-L', socket, 'new-session', '-d', '-s', 'bench', '-x', '200', '-y', '50'], { env });
      timeRun(process.execPath, [CLI, 'status'], opts); // warm the file cache
      const samples = { node: [], 'node -e in a tmux window': [] };
      for (const b of Object.keys(builds)) Object.assign(samples, { [`${b} frame`]: [], [`${b} load cpu`]: [] });
      for (let i = 0; i < runs; i++) {
        samples.node.push(timeCpu(process.execPath, ['-e', '0'], opts).cpu);
        samples['node -e in a tmux window'].push(await nodeInWindow(p, socket, env, i));
        // Rotate which build goes first, so none always follows another's cache state.
        const all = Object.entries(builds);
        const order = [...all.slice(i % all.length), ...all.slice(0, i % all.length)];
        for (const [b, cli] of order) {
          samples[`${b} frame`].push(await watchFirstFrame(p, socket, env, i, cli));
          samples[`${b} load cpu`].push(watchLoadCpu(cli, opts));
        }
      }
      out.sizes[n] = Object.fromEntries(
        Object.entries(samples).map(([k, v]) => [
          k === 'node' ? 'node -e 0 cpu' : k,
          { median_ms: round(median(v)), min_ms: round(Math.min(...v)), max_ms: round(Math.max(...v)) },
        ]),
      );
    } finally {
      tmuxKill(socket);
      p.cleanup();
    }
  }
  out.load_average_at_end = (await import('node:os')).loadavg().map((x) => round(x, 1));
  return out;
}

/** Delivery (link into new/) → the scripted model is called with that message, in a live idle agent. */
async function deliveryLatency(p, env, socket, count) {
  const { layoutFor } = await import(new URL('layout/layout.js', DIST).href);
  const { deliver } = await import(new URL('inbox/deliver.js', DIST).href);
  const layout = layoutFor(p.root, p.dir);
  const script = join(p.dir, 'echo.yaml');
  writeFileSync(script, 'replies:\n  - text: "ok"\n    repeat: true\n');
  const log = join(p.dir, 'live-calls.jsonl');
  const r = spawnSync(SPAWN_AGENT, ['--id', 'live', '--model', `script:${script}`, 'wait for mail'], {
    cwd: p.dir,
    env: { ...env, FLOTILLA_SCRIPT_LOG: log },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`live agent spawn failed: ${r.stderr}`);
  const recFile = join(p.root, 'state', 'agents', 'live.json');
  // Idle and its completion sent (a message landing while the completion goes out waits for
  // the next rescan: that is the surfacing path's business, not what this figure measures).
  const human = join(p.root, 'state', 'inbox', 'human', 'new');
  const completions = () => {
    try {
      return readdirSync(human).length;
    } catch {
      return 0;
    }
  };
  await until(
    () => readJson(recFile)?.status === 'idle' && completions() >= 1,
    30_000,
    'the live agent to go idle',
    20,
  );
  await sleep(1000);
  const seenAt = (marker) => {
    let text = '';
    try {
      text = readFileSync(log, 'utf8');
    } catch {
      return 0;
    }
    for (const line of text.split('\n')) if (line.includes(marker)) return JSON.parse(line).ts;
    return 0;
  };
  const samples = [];
  let stalled = 0;
  for (let i = 0; i < count; i++) {
    const marker = `bench-marker-${i}-${Date.now()}`;
    let linkedAt = 0;
    await deliver(
      layout,
      { from: 'human', to: 'live', kind: 'message', body: marker },
      {
        beforeLink: () => {
          linkedAt = Date.now();
        },
      },
    );
    const at = await until(() => seenAt(marker), 45_000, `message ${i} to reach the model`, 1);
    // A message landing while the previous run is still closing waits for the inbox rescan
    // (30 s): counted apart, since that is the surfacing path's race, not this figure's cost.
    if (at - linkedAt > 5_000) stalled++;
    else samples.push(at - linkedAt);
    // Let the turn end (one reply, no tools) so the next message finds the agent idle.
    await until(() => completions() >= i + 2, 20_000, 'the agent to be idle again', 5);
    await sleep(500);
  }
  spawnSync(process.execPath, [CLI, 'cancel', 'live'], { cwd: p.dir, env, stdio: 'ignore' });
  return {
    n: samples.length,
    stalled,
    p50_ms: percentile(samples, 50),
    p99_ms: percentile(samples, 99),
    max_ms: Math.max(...samples),
  };
}

export async function runScaleBench({ sizes = [10, 1000, 5000], runs = 5, messages = 100 } = {}) {
  const out = {
    runs,
    messages,
    load_average_at_start: (await import('node:os')).loadavg().map((x) => round(x, 1)),
    sizes: {},
  };
  for (const n of sizes) {
    const p = tempProject('flotilla-bench-scale-');
    const socket = `flotilla-scale-${process.pid}-${n}`;
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      XDG_CONFIG_HOME: join(p.dir, 'xdg'),
      FLOTILLA_ROOT: p.root,
      FLOTILLA_TMUX_SOCKET: socket,
      FLOTILLA_LIMITS_MAX_RUNNING: '64',
      FLOTILLA_LIMITS_MAX_SPAWNS_PER_TREE: '1000',
      FLOTILLA_TRANSCRIPTS_MAX_FILES: '0',
      FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'dont_ask',
      FLOTILLA_BUDGET_MAX_TOKENS_PER_TREE: '100000000',
    };
    const opts = { cwd: p.dir, env };
    try {
      populate(p.root, n);
      const done = join(p.dir, 'done.yaml');
      writeFileSync(done, 'replies:\n  - text: "done"\n');
      spawnSync('tmux', ['-L', socket, 'new-session', '-d', '-s', 'bench', '-x', '200', '-y', '50'], { env });
      timeRun(process.execPath, [CLI, 'status'], opts); // warm the file cache
      const samples = { node: [], status: [], send: [], spawn: [], watch: [] };
      // Interleaved, so a burst of load from elsewhere hits every figure alike.
      for (let i = 0; i < runs; i++) {
        samples.node.push(timeCpu(process.execPath, ['-e', '0'], opts));
        samples.status.push(timeCpu(process.execPath, [CLI, 'status'], opts));
        samples.send.push(timeCpu(process.execPath, [CLI, 'send', 'old000000', 'hello'], opts));
        samples.spawn.push(
          timeCpu(SPAWN_AGENT, ['--background', '--oneshot', '--model', `script:${done}`, 'say done'], opts),
        );
        samples.watch.push({ wall: await watchFirstFrame(p, socket, env, i), cpu: NaN });
      }
      const base = median(samples.node.map((s) => s.wall));
      const baseCpu = median(samples.node.map((s) => s.cpu));
      const fig = (s) => {
        const wall = median(s.map((x) => x.wall));
        const cpu = median(s.map((x) => x.cpu));
        return {
          median_ms: round(wall),
          ratio: round(wall / base, 2),
          ...(Number.isNaN(cpu) ? {} : { cpu_ms: round(cpu), cpu_ratio: round(cpu / baseCpu, 2) }),
        };
      };
      const delivery = await deliveryLatency(p, env, socket, messages);
      out.sizes[n] = {
        'node -e 0': { median_ms: round(base), cpu_ms: round(baseCpu) },
        'flotilla status': fig(samples.status),
        'flotilla send': fig(samples.send),
        'spawn-agent --background (to exit)': fig(samples.spawn),
        'watch first frame': fig(samples.watch),
        'delivery → model (live agent)': delivery,
      };
    } finally {
      tmuxKill(socket);
      if (!process.env.BENCH_KEEP) p.cleanup();
      else process.stderr.write(`kept ${p.dir}\n`);
    }
  }
  return out;
}

/** The history table of docs/benchmarks.md, one row per figure, one column per N. */
export function formatScaleTable(result) {
  const ns = Object.keys(result.sizes);
  const rows = [
    'node -e 0',
    'flotilla status',
    'flotilla send',
    'spawn-agent --background (to exit)',
    'watch first frame',
    'delivery → model (live agent)',
  ];
  const lines = [
    `| N finished records + transcripts | ${ns.map((n) => Number(n).toLocaleString('en')).join(' | ')} |`,
    `|---|${ns.map(() => '---').join('|')}|`,
  ];
  for (const row of rows) {
    const cells = ns.map((n) => {
      const v = result.sizes[n][row];
      if (!v) return '-';
      if ('p50_ms' in v) return `${v.p50_ms} / ${v.p99_ms} ms`;
      const cpu =
        v.cpu_ms === undefined ? '' : `; cpu ${v.cpu_ms} ms${v.cpu_ratio === undefined ? '' : ` (${v.cpu_ratio}×)`}`;
      return (v.ratio === undefined ? `${v.median_ms} ms` : `${v.median_ms} ms (${v.ratio}×)`) + cpu;
    });
    lines.push(
      `| ${row === 'delivery → model (live agent)' ? 'delivery → model p50 / p99' : row} | ${cells.join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const arg = (flag) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : args[i + 1];
  };
  const sizes = arg('--sizes')?.split(',').map(Number);
  if (arg('--only') === 'watch') {
    const result = await runWatchBench({
      ...(sizes ? { sizes } : {}),
      ...(arg('--runs') ? { runs: Number(arg('--runs')) } : {}),
      compare: arg('--compare'),
    });
    console.log(JSON.stringify(result, null, 2));
    process.exit(0);
  }
  const result = await runScaleBench({
    ...(sizes ? { sizes } : {}),
    ...(arg('--runs') ? { runs: Number(arg('--runs')) } : {}),
    ...(arg('--messages') ? { messages: Number(arg('--messages')) } : {}),
  });
  console.log(JSON.stringify(result, null, 2));
  console.log(formatScaleTable(result));
  if (!existsSync(CLI)) process.exitCode = 1;
}
