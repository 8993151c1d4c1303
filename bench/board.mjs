// The task board (docs/design.md §15) under load:
// - claims per second on one board with 20 contending processes: each is an agent (a
//   registered record with its own pid, so its claims stay live) looping claim --next → done
//   through the board's operations, as a teammate does; and the same crowd of 20 running
//   `flotilla task claim --next` from a shell, as an agent's shell does (a process start each);
// - `flotilla task list` cold start against boards of 10, 1,000 and 10,000 tasks (all but 50
//   finished, as a long-lived board is) and a backlog of 10,000 open tasks, against `node -e 0`
//   in the same run (§14's `status` bar: flat with N, ≤ 1.5×).
// - `flotilla task claim --next` cold start against boards of 0, 300, 1,000 and 5,000 finished
//   tasks, once per bus (`--only next`): flat with a board's history.
//   node bench/board.mjs [--sizes 10,1000,10000] [--finished 0,300,1000,5000] [--runs 11] [--workers 20]
//     [--tasks 400] [--only list|claims|next]
//     [--buses maildir,nats] [--nats nats://host:port]
//     [--compare /other/dist/cli/main.js,…]   (task list and claim --next of other builds too, interleaved: an A/B)
// The claims run once per bus (`fleet.bus`, given to every process as FLOTILLA_FLEET_BUS): on
// `nats` against its own nats-server (bench/bus.mjs ownNats) unless --nats names one, through
// the board operations every door calls (team-store/board.ts), so it measures whatever store
// the board uses on that bus: files on maildir, the fleet's BOARD bucket on nats://.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, median, percentile, round, tempProject } from './lib.mjs';
import { busEnv, withBuses } from './buses.mjs';
import { timeCpu } from './scale.mjs';

/** Points this process at `bus`; the function returned puts its environment back. */
function useBusEnv(bus) {
  const saved = { ...process.env };
  Object.assign(process.env, busEnv(bus));
  return () => {
    for (const k of Object.keys(busEnv(bus)))
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
  };
}

const dist = (p) => new URL(`../dist/${p}`, import.meta.url).href;

/**
 * Writes a board of `n` tasks the way the board's own writes leave it (task files, `active/`
 * and `claimed/` entries, `ended.log` and its checkpoint), without 10,000 fsyncs: `finished` done, then `claimed`
 * claimed by a person, the rest open. Builds each task and its index name with the built code.
 */
export async function populateBoard(layout, name, { finished, claimed, open }) {
  const [{ activeName }, { appendEnded }] = await Promise.all([
    import(dist('tasks/task.js')),
    import(dist('tasks/ended-log.js')),
  ]);
  const board = layout.board(name);
  for (const d of [board.tasksDir, board.activeDir, board.claimedDir]) mkdirSync(d, { recursive: true });
  const ended = [];
  const n = finished + claimed + open;
  for (let i = 1; i <= n; i++) {
    const task = benchTask(name, i, { finished, claimed });
    writeFileSync(board.task(task.id), JSON.stringify(task, null, 2) + '\n');
    if (task.status === 'done') ended.push(task.id);
    else writeFileSync(join(board.activeDir, activeName(task)), '');
    if (task.status === 'claimed') writeFileSync(board.claimed(task.id), '');
  }
  // The board's own appends (ended-log.ts), checkpoint included.
  for (const id of ended) appendEnded(board, 'done', id);
  writeFileSync(board.seqFile, `${n}\n`);
}

/** Task `i` of a bench board: the first `finished` done, the next `claimed` claimed by a person, the rest open. */
function benchTask(name, i, { finished, claimed }) {
  const at = new Date(Date.now() - 86_400_000 + i * 10).toISOString();
  const status = i <= finished ? 'done' : i <= finished + claimed ? 'claimed' : 'open';
  return {
    v: 1,
    id: `t${i}`,
    board: name,
    title: `task number ${i} of the backlog`,
    body: `what task ${i} is about, in a sentence or two`,
    status,
    priority: 'normal',
    labels: [],
    blocked_by: [],
    created_by: 'human',
    created_at: at,
    updated_at: at,
    claimed_by: status === 'open' ? null : 'human',
    claimed_at: status === 'open' ? null : at,
    finished_at: status === 'done' ? at : null,
    result: status === 'done' ? `result of task ${i}` : null,
    notes: [],
  };
}

/**
 * Boards on the fleet's BOARD bucket, each as the previous version's writes left it (a key per
 * task and the counter), then indexed by the board's own first write (board-kv-index.ts), so
 * they read as the board's writes leave them without 5,000 claim → done round trips each.
 */
async function populateKvBoards(layout, boards) {
  const [{ sharedKvFor }, { ensureIndexed }] = await Promise.all([
    import(dist('bus/shared.js')),
    import(dist('team-store/board-kv-index.js')),
  ]);
  const kv = await sharedKvFor(layout, 'board');
  for (const [name, shape] of Object.entries(boards)) {
    const n = shape.finished + shape.claimed + shape.open;
    for (let i = 1; i <= n; i += 128) {
      const batch = Array.from({ length: Math.min(128, n - i + 1) }, (_, k) => benchTask(name, i + k, shape));
      await Promise.all(batch.map((t) => kv.create(`${name}.${t.id}`, JSON.stringify(t))));
    }
    await kv.create(`${name}.=seq`, String(n));
  }
  await ensureIndexed(kv);
}

/** `task list` and `node -e 0`, interleaved, for each board shape (and each other build's CLI in `compare`). */
async function listBench({ sizes, runs, compare = [] }) {
  const { layoutFor, ensureState } = await import(dist('layout/layout.js'));
  const shapes = [
    ...sizes.map((n) => ({
      key: `${n} tasks, ${Math.min(n, 50)} unfinished`,
      n,
      finished: Math.max(0, n - 50),
      claimed: Math.min(n, 20),
      open: Math.max(0, Math.min(n, 50) - 20),
    })),
    { key: '10000 open tasks', n: 10_000, finished: 0, claimed: 0, open: 10_000 },
  ];
  const p = tempProject('flotilla-bench-board-');
  const env = { ...process.env, FLOTILLA_ROOT: p.root };
  delete env.TMUX;
  delete env.FLOTILLA_AGENT_ID;
  delete env.FLOTILLA_BOARD;
  delete env.NODE_EXTRA_CA_CERTS;
  try {
    const layout = layoutFor(p.root, p.dir);
    ensureState(layout);
    for (const [i, s] of shapes.entries()) await populateBoard(layout, `b${i}`, s);
    const opts = { cwd: p.dir, env };
    // Warm the file cache (and the config cache) once, as for the other cold starts.
    for (let i = 0; i < shapes.length; i++) timeCpu(process.execPath, [CLI, 'task', 'list', '--board', `b${i}`], opts);
    const cases = { 'node -e 0': () => timeCpu(process.execPath, ['-e', '0'], opts) };
    for (const [i, s] of shapes.entries()) {
      cases[`task list, ${s.key}`] = () => timeCpu(process.execPath, [CLI, 'task', 'list', '--board', `b${i}`], opts);
      for (const [j, cli] of compare.entries())
        cases[`[${j + 1}] task list, ${s.key}`] = () =>
          timeCpu(process.execPath, [cli, 'task', 'list', '--board', `b${i}`], opts);
    }
    const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let r = 0; r < runs; r++) for (const [k, fn] of Object.entries(cases)) samples[k].push(fn());
    const wall = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, round(median(v.map((x) => x.wall)))]));
    const cpu = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, round(median(v.map((x) => x.cpu)))]));
    const ratio = (t) =>
      Object.fromEntries(
        Object.entries(t)
          .filter(([k]) => k !== 'node -e 0')
          .map(([k, v]) => [k, round(v / t['node -e 0'], 2)]),
      );
    return { runs, median_ms: wall, ratio_to_node: ratio(wall), cpu_ms: cpu, cpu_ratio_to_node: ratio(cpu) };
  } finally {
    p.cleanup();
  }
}

/**
 * `flotilla task claim --next` from a shell against boards of 0, 300, 1,000 and 5,000 finished
 * tasks (and enough open ones for every run to claim the next), interleaved with `node -e 0`,
 * on `bus`: what one claim costs as a board's history grows.
 */
async function claimNextBench({ finished, runs, bus, compare = [] }) {
  const [{ layoutFor, ensureState }, { runAtExit }] = await Promise.all([
    import(dist('layout/layout.js')),
    import(dist('at-exit.js')),
  ]);
  const p = tempProject('flotilla-bench-next-');
  const restoreEnv = useBusEnv(bus);
  try {
    const layout = layoutFor(p.root, p.dir);
    ensureState(layout);
    const claimers = 1 + compare.length;
    const shapes = Object.fromEntries(
      finished.map((n, i) => [`b${i}`, { finished: n, claimed: 0, open: claimers * (runs + 1) + 5 }]),
    );
    if (bus === 'maildir') for (const [name, s] of Object.entries(shapes)) await populateBoard(layout, name, s);
    else await populateKvBoards(layout, shapes);
    const env = { ...process.env, FLOTILLA_ROOT: p.root, ...busEnv(bus) };
    delete env.TMUX;
    delete env.FLOTILLA_AGENT_ID;
    delete env.FLOTILLA_BOARD;
    delete env.NODE_EXTRA_CA_CERTS;
    const opts = { cwd: p.dir, env };
    const claim = (i, cli = CLI) =>
      timeCpu(process.execPath, [cli, 'task', 'claim', '--next', '--board', `b${i}`], opts);
    // One claim each to warm the file cache (and the config cache), as for the other cold starts.
    finished.forEach((_, i) => [CLI, ...compare].forEach((cli) => claim(i, cli)));
    const cases = { 'node -e 0': () => timeCpu(process.execPath, ['-e', '0'], opts) };
    finished.forEach((n, i) => {
      cases[`claim --next, ${n} finished`] = () => claim(i);
      // Another build's CLI on the same boards (an A/B): `[1] …`.
      compare.forEach((cli, j) => (cases[`[${j + 1}] claim --next, ${n} finished`] = () => claim(i, cli)));
    });
    const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let r = 0; r < runs; r++) for (const [k, fn] of Object.entries(cases)) samples[k].push(fn());
    const wall = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, round(median(v.map((x) => x.wall)))]));
    const cpu = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, round(median(v.map((x) => x.cpu)))]));
    const first = `claim --next, ${finished[0]} finished`;
    const ratio = (t, to) =>
      Object.fromEntries(
        Object.entries(t)
          .filter(([k]) => k !== 'node -e 0')
          .map(([k, v]) => [k, round(v / t[to], 2)]),
      );
    return {
      runs,
      median_ms: wall,
      ratio_to_fewest_finished: ratio(wall, first),
      ratio_to_node: ratio(wall, 'node -e 0'),
      cpu_ms: cpu,
    };
  } finally {
    await runAtExit();
    restoreEnv();
    p.cleanup();
  }
}

/** One contending agent: registers itself, waits for `go`, then claim --next → done until the board is empty. */
const WORKER = `
const [layoutUrl, registryUrl, procUrl, boardUrl, root, project, id, go] = process.argv.slice(1);
const { existsSync } = require('node:fs');
(async () => {
  const [{ layoutFor }, { createRecord }, { processStartTime }, { claimNext, finishTask }] = await Promise.all([import(layoutUrl), import(registryUrl), import(procUrl), import(boardUrl)]);
  const layout = layoutFor(root, project);
  const now = new Date().toISOString();
  createRecord(layout, {
    id, name: 'bench', parentId: null, rootId: id, depth: 0, pid: process.pid, pidStartTime: processStartTime(process.pid),
    tmux: null, cwd: project, worktree: null, mode: 'interactive', status: 'working', exitReason: null, createdAt: now,
    startedAt: now, finishedAt: null, turns: 0, maxTurns: 20, timeoutSecs: 600, usage: { inputTokens: 0, outputTokens: 0, costUsd: null },
    lastLine: '', model: 'script:bench.yaml', scripted: true, permissionMode: 'dont_ask',
    effectivePolicy: { tools: [], permissionMode: 'dont_ask', secrets: [] }, background: false, resumedFrom: null, spawnedBy: 'human',
  });
  process.stdout.write('ready\\n');
  while (!existsSync(go)) await new Promise((r) => setTimeout(r, 2));
  const claims = [];
  const cycles = [];
  const ids = [];
  for (;;) {
    const t0 = process.hrtime.bigint();
    const task = await claimNext(layout, 'crowd', id);
    const us = Number(process.hrtime.bigint() - t0) / 1000;
    if (!task) break;
    claims.push(us);
    ids.push(task.id);
    await finishTask(layout, 'crowd', task.id, id, 'done', 'ok');
    cycles.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  process.stdout.write(JSON.stringify({ claims, cycles, ids, end: Date.now() }) + '\\n', () => process.exit(0));
})().catch((e) => { console.error(e); process.exit(1); });
`;

function collect(child) {
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  return {
    ready: () => out.includes('ready\n'),
    done: new Promise((resolve, reject) =>
      child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`worker failed (${code}): ${err}`)))),
    ),
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function claimsBench({ workers, tasks, bus }) {
  const [{ layoutFor, ensureState }, { addTask, listBoard }, { runAtExit }] = await Promise.all([
    import(dist('layout/layout.js')),
    import(dist('team-store/board.js')),
    import(dist('at-exit.js')),
  ]);
  const p = tempProject('flotilla-bench-claims-');
  // This process adds the tasks and reads the counts as the fleet's person would: on the bus's store.
  const restoreEnv = useBusEnv(bus);
  // The board's tasks, added as that store keeps them: files written at once on maildir, each through the board on
  // nats://.
  const fill = async (layout, name, n) => {
    if (bus === 'maildir') return populateBoard(layout, name, { finished: 0, claimed: 0, open: n });
    for (let i = 1; i <= n; i++)
      await addTask(
        layout,
        name,
        { title: `task number ${i} of the backlog`, body: `what task ${i} is about` },
        'human',
      );
  };
  try {
    const layout = layoutFor(p.root, p.dir);
    ensureState(layout);
    await fill(layout, 'crowd', tasks);
    // The board's own first write, so its lock and folders are as any board's.
    await addTask(layout, 'crowd', { title: 'one more, added through the board' }, 'human');
    const go = join(p.dir, 'go');
    const workerEnv = { ...process.env, ...busEnv(bus) };
    const procs = Array.from({ length: workers }, (_, i) =>
      collect(
        spawn(
          process.execPath,
          [
            '-e',
            WORKER,
            dist('layout/layout.js'),
            dist('fleet/registry.js'),
            dist('fleet/proc.js'),
            dist('team-store/board.js'),
            p.root,
            p.dir,
            `w${i}`,
            go,
          ],
          { env: workerEnv, stdio: ['ignore', 'pipe', 'pipe'] },
        ),
      ),
    );
    while (!procs.every((w) => w.ready())) await sleep(10);
    const t0 = Date.now();
    writeFileSync(go, '');
    const outs = (await Promise.all(procs.map((w) => w.done))).map((o) => JSON.parse(o.trim().split('\n').at(-1)));
    const seconds = (Math.max(...outs.map((o) => o.end)) - t0) / 1000;
    const all = outs.flatMap((o) => o.ids);
    const claimUs = outs.flatMap((o) => o.claims);
    const cycleUs = outs.flatMap((o) => o.cycles);
    const inProcess = {
      workers,
      tasks: tasks + 1,
      claimed: all.length,
      distinct: new Set(all).size,
      seconds: round(seconds, 2),
      claim_done_cycles_per_s: round(all.length / seconds),
      claim_p50_ms: round(percentile(claimUs, 50) / 1000, 2),
      claim_p99_ms: round(percentile(claimUs, 99) / 1000, 2),
      cycle_p50_ms: round(percentile(cycleUs, 50) / 1000, 2),
      cycle_p99_ms: round(percentile(cycleUs, 99) / 1000, 2),
      per_worker_min_max: [Math.min(...outs.map((o) => o.ids.length)), Math.max(...outs.map((o) => o.ids.length))],
    };

    // The same crowd from a shell: 20 loops of `flotilla task claim --next` (a person's claims).
    const cliTasks = workers * 5;
    await fill(layout, 'shell', cliTasks);
    const env = { ...process.env, FLOTILLA_ROOT: p.root, FLOTILLA_BOARD: 'shell', ...busEnv(bus) };
    delete env.TMUX;
    delete env.FLOTILLA_AGENT_ID;
    delete env.NODE_EXTRA_CA_CERTS;
    const loop = `n=0; while ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} task claim --next --json >> claims.$$ 2>>claims-err.$$; do n=$((n+1)); done; echo $n`;
    const s0 = Date.now();
    const shells = Array.from({ length: workers }, () =>
      collect(spawn('sh', ['-c', loop], { cwd: p.dir, env, stdio: ['ignore', 'pipe', 'pipe'] })),
    );
    const counts = (await Promise.all(shells.map((s) => s.done))).map((o) => Number(o.trim()));
    const cliSeconds = (Date.now() - s0) / 1000;
    const counted = (await listBoard(layout, 'shell', { limit: 0 })).counts;
    // Each shell stops at its first refused claim: the last ones say the board is empty; any other says why it stopped
    // early.
    const stops = [
      ...new Set(
        readdirSync(p.dir)
          .filter((f) => f.startsWith('claims-err.'))
          .flatMap((f) => readFileSync(join(p.dir, f), 'utf8').trim().split('\n').filter(Boolean)),
      ),
    ];
    const shell = {
      workers,
      tasks: cliTasks,
      claimed: counts.reduce((a, b) => a + b, 0),
      board_says_claimed: counted.claimed,
      board_says_open: counted.open,
      seconds: round(cliSeconds, 2),
      claims_per_s: round(cliTasks / cliSeconds, 1),
      shells_stopped_on: stops,
    };
    return { in_process: inProcess, cli_claim_next: shell };
  } finally {
    await runAtExit();
    restoreEnv();
    p.cleanup();
  }
}

export async function runBoardBench({
  finished = [0, 300, 1000, 5000],
  sizes = [10, 1000, 10_000],
  runs = 11,
  workers = 20,
  tasks = 400,
  only,
  compare,
  buses,
  nats,
} = {}) {
  const out = { load_average: (await import('node:os')).loadavg().map((x) => round(x, 1)) };
  if (!only || only === 'next')
    out.claim_next = await withBuses({ buses, nats }, (bus) => claimNextBench({ finished, runs, bus, compare }));
  if (!only || only === 'claims')
    out.claims = await withBuses({ buses, nats }, (bus) => claimsBench({ workers, tasks, bus }));
  if (!only || only === 'list') out.task_list = await listBench({ sizes, runs, compare });
  out.load_average_after = (await import('node:os')).loadavg().map((x) => round(x, 1));
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const arg = (flag) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : args[i + 1];
  };
  console.log(
    JSON.stringify(
      await runBoardBench({
        ...(arg('--sizes') ? { sizes: arg('--sizes').split(',').map(Number) } : {}),
        ...(arg('--finished') ? { finished: arg('--finished').split(',').map(Number) } : {}),
        ...(arg('--runs') ? { runs: Number(arg('--runs')) } : {}),
        ...(arg('--workers') ? { workers: Number(arg('--workers')) } : {}),
        ...(arg('--tasks') ? { tasks: Number(arg('--tasks')) } : {}),
        ...(arg('--only') ? { only: arg('--only') } : {}),
        ...(arg('--compare') ? { compare: arg('--compare').split(',') } : {}),
        ...(arg('--buses') ? { buses: arg('--buses').split(',') } : {}),
        ...(arg('--nats') ? { nats: arg('--nats') } : {}),
      }),
      null,
      2,
    ),
  );
}
