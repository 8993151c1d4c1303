#!/usr/bin/env node
// The fleet's bus, maildir next to nats:// (docs/design.md §18), against the built dist/:
// node bench/bus.mjs [--only delivery,throughput,status,reads,slots,server,side] [--messages 100] [--records 5000]
// [--runs 7]
// With no nats-server to name (`--nats nats://host:port`) it starts one of its own (Debian's
// `nats-server -js`) on a free port with a temporary store. Prints one JSON document.
//  - delivery: an idle agent (real harness in tmux, scripted model, the bus named by
//    FLOTILLA_FLEET_BUS); one message at a time, `gap` ms apart, sent by this process through
//    the bus; latency = deliver() called → the transcript's `surfaced` entry naming its id
//    (what the model saw, in the call that turn makes). On nats:// that path is outbox, publish,
//    the stream's ack, the harness's consumer, its spool, then the same surfacing.
//  - throughput: one process sends N messages, 64 in flight, to one recipient whose spool a
//    second process feeds (on nats://, `flotilla`'s own receive; on maildir, nothing to feed);
//    msg/s until every one is in the recipient's new/, and msg/s of the sends alone.
//  - status: `flotilla status` cold (median wall ms of `runs`) with N finished records: on
//    maildir in this host's registry; on nats:// in the RECORDS bucket, published from another
//    fleet root (another "host", b) while this host's registry is empty; `node -e 0` beside.
//    `status --all` beside it (every finished agent printed: on nats:// every ended record of b read).
//    Then `flotilla gc` once on the host holding them (on nats://, b's, which clears the bus
//    too): its wall ms, how many records it removed, and `status --all`'s rows after it.
//  - reads: what an agent's process reads of the fleet's records with N ended agents (for N =
//    100 and --records), in process, median and p99 of `runs` × 10 calls after one warm call:
//    the budget check before each model call (spawn/budget.ts fleetBudgetRefusal, a budget set),
//    list_agents's rows of a tree of 5 ended agents elsewhere, and an id lookup, exact and by a
//    unique prefix. On maildir the records are this host's (the budget's usage index, the children
//    index, the registry's ids); on nats:// they are host b's on the bus (RecordsBus.tree,
//    .find). Flat in N is the line (docs/design.md §18).
//  - side (not in the default run): `status` and `status --all` on maildir and on nats:// with 100
//    and --records finished agents, the two buses' commands timed in turn in each run (median of
//    `runs`), and nats:// / maildir: the line is ≤ 1.5× (docs/design.md §18).
//  - slots: a running slot taken and given back by one process, sequentially: on maildir the
//    host's socket slot (fleet/slots.ts), on nats:// that and one of the fleet's KV slots
//    (fleet/fleet-slot.ts), p50/p99 of the take, and take+release cycles/s.
//  - server (nats only): the server's own rate on this machine, without Flotilla's files:
//    revision-checked KV updates and de-duplicated stream publishes, 64 in flight.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, median, percentile, round, tempProject, timeRun, tmuxKill } from './lib.mjs';
import { populate } from './scale.mjs';

const DIST = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, DIST).href);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const FLEET = 'benchbus';

async function waitFor(fn, ms, what, pollMs = 5) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}

const stats = (samples) => ({
  n: samples.length,
  p50_ms: round(percentile(samples, 50)),
  p99_ms: round(percentile(samples, 99)),
  max_ms: round(Math.max(...samples)),
});

/** The config a process of the benchmark's fleet uses for `bus`; `host` names the machine it plays. */
async function fleetConfig(bus, host, name = FLEET) {
  const { defaultConfig } = await load('config/schema.js');
  const d = defaultConfig();
  return { fleet: { ...d.fleet, bus, name, ...(host ? { host } : {}) } };
}

// Each status fleet is a fleet of its own on the server: another section's records (reads, or
// the last size) would otherwise be read by its `status --all`.
let fleets = 0;

/** A nats-server of our own: free port, temporary store; `stop()` ends it. */
export async function ownNats() {
  const port = await new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port: p } = s.address();
      s.close(() => resolve(p));
    });
  });
  const store = mkdtempSync(join(tmpdir(), 'flotilla-bench-nats-'));
  const proc = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', store], { stdio: 'ignore' });
  const url = `nats://127.0.0.1:${port}`;
  await waitFor(
    () =>
      new Promise((resolve) => {
        const s = connect(port, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(false));
      }),
    30_000,
    'nats-server',
    50,
  );
  return {
    url,
    stop: () => {
      proc.kill('SIGKILL');
      rmSync(store, { recursive: true, force: true });
    },
  };
}

async function delivery(bus, messages, gapMs) {
  const [{ layoutFor }, { busFor, closeBuses }, { readTranscript }] = await Promise.all([
    load('layout/layout.js'),
    load('bus/open.js'),
    load('transcript/reader.js'),
  ]);
  const p = tempProject('flotilla-bench-bus-');
  const layout = layoutFor(p.root, p.dir);
  const socket = `flotilla-bench-bus-${process.pid}`;
  const script = join(p.dir, 'idle.yaml');
  writeFileSync(script, 'replies:\n  - when: { kind: inbox }\n    repeat: true\n    text: "ok"\n  - text: "ready"\n');
  const id = 'idle-000001';
  const env = [
    `FLOTILLA_ROOT=${p.root}`,
    'FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE=dont_ask',
    'FLOTILLA_LIMITS_MAX_TURNS=100000',
    `FLOTILLA_FLEET_BUS=${bus}`,
    `FLOTILLA_FLEET_NAME=${FLEET}`,
  ].flatMap((e) => ['-e', e]);
  spawnSync(
    'tmux',
    [
      '-L',
      socket,
      'new-session',
      '-d',
      '-s',
      id,
      '-x',
      '120',
      '-y',
      '30',
      '-c',
      p.dir,
      ...env,
      process.execPath,
      CLI,
      'run',
      '--id',
      id,
      '--model',
      `script:${script}`,
    ],
    { stdio: 'ignore' },
  );
  const send = busFor(layout, await fleetConfig(bus));
  try {
    await waitFor(
      () => {
        try {
          return ['idle', 'working'].includes(JSON.parse(readFileSync(layout.registryFile(id), 'utf8')).status);
        } catch {
          return false;
        }
      },
      60_000,
      'the agent to start',
      50,
    );
    // Warm: the first message pays the connection and the consumer's creation.
    const surfacedAt = new Map();
    const scan = () => {
      let entries = [];
      try {
        entries = readTranscript(layout, id).entries;
      } catch {
        return;
      } // not written yet
      for (const e of entries)
        if (e.type === 'surfaced' && e.source === 'inbox')
          for (const m of e.ids ?? []) if (!surfacedAt.has(m)) surfacedAt.set(m, Date.parse(e.ts));
    };
    const warm = await send.mail.deliver({ from: 'human', to: id, kind: 'message', body: 'warm up' });
    await waitFor(
      () => {
        scan();
        return surfacedAt.has(warm.message.id);
      },
      60_000,
      'the first message surfaced',
      10,
    );
    const samples = [];
    for (let i = 0; i < messages; i++) {
      const t0 = Date.now();
      const d = await send.mail.deliver({ from: 'human', to: id, kind: 'message', body: `m${i}` });
      await waitFor(
        () => {
          scan();
          return surfacedAt.has(d.message.id);
        },
        60_000,
        `message ${i} surfaced`,
        2,
      );
      samples.push(Math.max(0, surfacedAt.get(d.message.id) - t0));
      await sleep(gapMs);
    }
    return {
      ...stats(samples),
      gap_ms: gapMs,
      from: 'deliver() called',
      to: "the transcript's surfaced entry (the model's call)",
    };
  } finally {
    await closeBuses();
    tmuxKill(socket);
    p.cleanup();
  }
}

async function throughput(bus, count) {
  const [{ layoutFor, ensureState }, { busFor, closeBuses }] = await Promise.all([
    load('layout/layout.js'),
    load('bus/open.js'),
  ]);
  const p = tempProject('flotilla-bench-bus-tp-');
  const layout = layoutFor(p.root, p.dir);
  ensureState(layout);
  const to = 'sink-000001';
  // The receiving side in its own process, as a harness feeds its spool.
  const feeder =
    bus === 'maildir'
      ? null
      : spawn(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            `
    const { layoutFor } = await import(${JSON.stringify(new URL('layout/layout.js', DIST).href)});
    const { busFor } = await import(${JSON.stringify(new URL('bus/open.js', DIST).href)});
    const cfg = ${JSON.stringify(await fleetConfig(bus))};
    await busFor(layoutFor(${JSON.stringify(p.root)}, ${JSON.stringify(p.dir)}), cfg).mail.receive([${JSON.stringify(to)}]);
    process.stdout.write('ready\\n');
  `,
          ],
          { stdio: ['ignore', 'pipe', 'inherit'] },
        );
  if (feeder) await new Promise((resolve) => feeder.stdout.once('data', resolve));
  const b = busFor(layout, await fleetConfig(bus));
  const newDir = join(layout.inbox(to), 'new');
  const count0 = () => {
    try {
      return readdirSync(newDir).length;
    } catch {
      return 0;
    }
  };
  try {
    await b.mail.deliver({ from: 'human', to, kind: 'message', body: 'warm up' });
    await waitFor(() => count0() >= 1, 60_000, 'the warm-up message spooled');
    const t0 = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const i = next++;
        await b.mail.deliver({ from: 'human', to, kind: 'message', body: `t${i} ${'x'.repeat(200)}` });
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    const sentMs = performance.now() - t0;
    await waitFor(() => count0() >= count + 1, 300_000, 'every message in new/', 5);
    const allMs = performance.now() - t0;
    return {
      messages: count,
      in_flight: 64,
      sends_per_sec: Math.round(count / (sentMs / 1000)),
      delivered_per_sec: Math.round(count / (allMs / 1000)),
    };
  } finally {
    feeder?.kill('SIGKILL');
    await closeBuses();
    p.cleanup();
  }
}

/**
 * A fleet whose `status` shows N finished records: on maildir in this host's registry, on nats:// another host's on the
 * bus.
 */
export async function statusFleet(bus, records) {
  const [{ layoutFor, ensureState }, { busFor, closeBuses }] = await Promise.all([
    load('layout/layout.js'),
    load('bus/open.js'),
  ]);
  const here = tempProject('flotilla-bench-bus-st-');
  const there = bus === 'maildir' ? null : tempProject('flotilla-bench-bus-b-');
  const name = `${FLEET}-st${++fleets}`;
  try {
    ensureState(layoutFor(here.root, here.dir));
    if (!there) populate(here.root, records);
    else {
      // Another host's records: its own registry files, each mirrored into the bucket by that host.
      populate(there.root, records);
      // Each record names the host that runs it (§17): b.
      const dir = join(there.root, 'state', 'agents');
      for (const f of readdirSync(dir))
        writeFileSync(
          join(dir, f),
          JSON.stringify({ ...JSON.parse(readFileSync(join(dir, f), 'utf8')), host: 'b' }, null, 2) + '\n',
        );
      const layoutB = layoutFor(there.root, there.dir);
      ensureState(layoutB);
      const { listRecords } = await load('fleet/registry.js');
      const pub = busFor(layoutB, await fleetConfig(bus, 'b', name)).records;
      const all = listRecords(layoutB);
      let i = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (i < all.length) {
            const r = all[i++];
            const out = await pub.publish(r);
            if (out !== 'published') throw new Error(`publish ${r.id}: ${out}`);
          }
        }),
      );
      await pub.beat();
      await closeBuses();
    }
    const env = {
      PATH: process.env.PATH,
      HOME: here.dir,
      FLOTILLA_ROOT: here.root,
      FLOTILLA_FLEET_BUS: bus,
      FLOTILLA_FLEET_NAME: name,
      FLOTILLA_FLEET_HOST: 'a',
    };
    return {
      here,
      there,
      env,
      opts: { cwd: here.dir, env },
      cleanup: () => {
        here.cleanup();
        there?.cleanup();
      },
    };
  } catch (err) {
    here.cleanup();
    there?.cleanup();
    throw err;
  }
}

async function status(bus, records, runs) {
  const { there, env, opts, cleanup } = await statusFleet(bus, records);
  try {
    // A first run fills the config cache, as a person's second `status` finds it.
    const first = spawnSync(process.execPath, [CLI, 'status'], { ...opts, encoding: 'utf8' });
    if (first.status !== 0) throw new Error(`status failed: ${first.stderr}`);
    const shown = first.stdout.split('\n').filter((l) => /old\d{6}/.test(l)).length;
    const node = [];
    const st = [];
    const all = [];
    for (let r = 0; r < runs; r++) {
      node.push(timeRun(process.execPath, ['-e', '0'], opts));
      st.push(timeRun(process.execPath, [CLI, 'status'], opts));
      all.push(timeRun(process.execPath, [CLI, 'status', '--all'], opts));
    }
    // Then `flotilla gc` on the host that holds them (b on nats://, which removes them from the bus
    // too; this host on maildir), once, cold: every record has finished, so all of them go.
    const gcEnv = there ? { ...env, HOME: there.dir, FLOTILLA_ROOT: there.root, FLOTILLA_FLEET_HOST: 'b' } : env;
    const t0 = performance.now();
    const gc = spawnSync(process.execPath, [CLI, 'gc', '--json'], {
      cwd: there?.dir ?? here.dir,
      env: gcEnv,
      encoding: 'utf8',
    });
    const gcMs = performance.now() - t0;
    if (gc.status !== 0) throw new Error(`gc failed: ${gc.stderr}`);
    const removed = JSON.parse(gc.stdout);
    const after = spawnSync(process.execPath, [CLI, 'status', '--all'], { ...opts, encoding: 'utf8' });
    return {
      records,
      where: there ? 'another host, on the bus' : "this host's registry",
      rows_shown: shown,
      status_ms: round(median(st)),
      node_ms: round(median(node)),
      ratio: round(median(st) / median(node), 2),
      status_all_ms: round(median(all)),
      status_all_ratio: round(median(all) / median(node), 2),
      gc_ms: round(gcMs),
      gc_removed: removed.records.length,
      gc_removed_on_bus: removed.bus?.records?.length ?? null,
      rows_after_gc: after.stdout.split('\n').filter((l) => /old\d{6}/.test(l)).length,
    };
  } finally {
    cleanup();
  }
}

/**
 * `status` and `status --all` on maildir and on nats:// side by side (`--only side`): both fleets
 * made first (as `status` makes them), then each run times `node -e 0` and the four commands in
 * turn, so a machine whose load moves moves all of them alike. Medians, and nats:// / maildir.
 */
async function statusSideBySide(nats, records, runs) {
  const fleets = { maildir: await statusFleet('maildir', records), nats: await statusFleet(nats, records) };
  try {
    for (const f of Object.values(fleets)) {
      // A first run fills the config and code caches, as a person's second `status` finds them.
      const first = spawnSync(process.execPath, [CLI, 'status'], { ...f.opts, encoding: 'utf8' });
      if (first.status !== 0) throw new Error(`status failed: ${first.stderr}`);
    }
    const t = { node: [], maildir: [], nats: [], maildir_all: [], nats_all: [] };
    const cpu = { node: [], maildir: [], nats: [], maildir_all: [], nats_all: [] };
    const run = (key, args, opts) => {
      const r = cpuRun(args, opts);
      t[key].push(r.wall);
      cpu[key].push(r.cpu);
    };
    for (let r = 0; r < runs; r++) {
      run('node', ['-e', '0'], fleets.maildir.opts);
      for (const bus of ['maildir', 'nats']) run(bus, [CLI, 'status'], fleets[bus].opts);
      for (const bus of ['maildir', 'nats']) run(`${bus}_all`, [CLI, 'status', '--all'], fleets[bus].opts);
    }
    const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, median(v)]));
    const c = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, median(v)]));
    const pair = (x, key) => ({
      maildir: round(x[key === '' ? 'maildir' : 'maildir_all']),
      nats: round(x[key === '' ? 'nats' : 'nats_all']),
      ratio: round(x[key === '' ? 'nats' : 'nats_all'] / x[key === '' ? 'maildir' : 'maildir_all'], 2),
    });
    return {
      records,
      runs,
      node_ms: round(m.node),
      node_cpu_ms: round(c.node),
      status_ms: pair(m, ''),
      status_all_ms: pair(m, 'all'),
      status_cpu_ms: pair(c, ''),
      status_all_cpu_ms: pair(c, 'all'),
    };
  } finally {
    for (const f of Object.values(fleets)) f.cleanup();
  }
}

// Runs argv[1:] and prints its CPU (user + sys, µs resolution: wait4's rusage) and wall seconds (fork to exit, without
// python's own start) on stderr's last line.
const CPU_OF = [
  'import os, sys, time',
  't0 = time.monotonic()',
  'pid = os.fork()',
  'if pid == 0: os.execv(sys.argv[1], sys.argv[1:])',
  '_, st, ru = os.wait4(pid, 0)',
  'sys.stderr.write("cpu %f %f %f\\n" % (ru.ru_utime, ru.ru_stime, time.monotonic() - t0))',
  'sys.exit(os.waitstatus_to_exitcode(st))',
].join('\n');

/** Wall and CPU (user + sys) ms of one run of `node args`. */
function cpuRun(args, opts) {
  const r = spawnSync('python3', ['-c', CPU_OF, process.execPath, ...args], {
    ...opts,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  const [, user, sys, wall] = r.stderr.trim().split('\n').at(-1).split(' ');
  return { wall: Number(wall) * 1000, cpu: (Number(user) + Number(sys)) * 1000 };
}

/** The record reads of an agent's process against N ended agents (see the header). */
async function reads(bus, records, runs) {
  const [
    { layoutFor, ensureState },
    { busFor, closeBuses },
    { defaultConfig },
    { fleetBudgetRefusal },
    { subtreeRecords },
    { resolveAgent, listRecords, readRecord },
    { findInFleet },
    { subtreeElsewhere },
  ] = await Promise.all([
    load('layout/layout.js'),
    load('bus/open.js'),
    load('config/schema.js'),
    load('spawn/budget.js'),
    load('fleet/live.js'),
    load('fleet/registry.js'),
    load('hosts/elsewhere.js'),
    load('spawn/far-ops.js'),
  ]);
  const here = tempProject('flotilla-bench-bus-rd-');
  const there = bus === 'maildir' ? null : tempProject('flotilla-bench-bus-rdb-');
  const saved = { ...process.env };
  try {
    const holder = there ?? here;
    populate(holder.root, records);
    // One more ended agent whose id a unique prefix names: `lead-zk`.
    const dir = join(holder.root, 'state', 'agents');
    const first = JSON.parse(readFileSync(join(dir, 'old000000.json'), 'utf8'));
    writeFileSync(
      join(dir, 'lead-zk7q2m.json'),
      JSON.stringify({ ...first, id: 'lead-zk7q2m', rootId: 'lead-zk7q2m', parentId: null }, null, 2) + '\n',
    );
    const d = defaultConfig();
    const config = {
      ...d,
      fleet: { ...d.fleet, bus, name: FLEET, host: 'a' },
      budget: { ...d.budget, max_tokens_per_tree: 1e12 },
    };
    const layout = layoutFor(here.root, here.dir);
    ensureState(layout);
    if (there) {
      for (const f of readdirSync(dir))
        writeFileSync(
          join(dir, f),
          JSON.stringify({ ...JSON.parse(readFileSync(join(dir, f), 'utf8')), host: 'b' }, null, 2) + '\n',
        );
      const layoutB = layoutFor(there.root, there.dir);
      ensureState(layoutB);
      const pub = busFor(layoutB, await fleetConfig(bus, 'b')).records;
      const all = listRecords(layoutB);
      let i = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (i < all.length) {
            const r = all[i++];
            const out = await pub.publish(r);
            if (out !== 'published') throw new Error(`publish ${r.id}: ${out}`);
          }
        }),
      );
      await closeBuses();
    }
    process.env.FLOTILLA_FLEET_HOST = 'a';
    const fleet = busFor(layout, config).records;
    const root = there ? await fleet.get('old000000') : listRecords(layout).find((r) => r.id === 'old000000');
    const calls = {
      budget: async () => {
        if (await fleetBudgetRefusal(layout, config, 'old000000', { unreachable: 'refuse' }))
          throw new Error('refused');
      },
      list_agents: async () => {
        const rows = there
          ? await subtreeElsewhere(layout, config, root, new Set())
          : subtreeRecords(layout, 'old000000');
        if (rows.length !== 4) throw new Error(`list_agents: ${rows.length} rows, expected 4`);
      },
      lookup_by_id: async () => {
        const found = there ? await fleet.get('lead-zk7q2m') : readRecord(layout, 'lead-zk7q2m');
        if (found?.id !== 'lead-zk7q2m') throw new Error('lookup by id missed');
      },
      lookup_by_prefix: async () => {
        const found = there ? await findInFleet(fleet, 'lead-zk') : resolveAgent(layout, 'lead-zk');
        if (found?.id !== 'lead-zk7q2m') throw new Error('lookup missed');
      },
    };
    const out = { records, where: there ? 'another host, on the bus' : "this host's registry" };
    for (const [name, call] of Object.entries(calls)) {
      await call();
      const ms = [];
      for (let r = 0; r < runs * 10; r++) {
        const t0 = performance.now();
        await call();
        ms.push(performance.now() - t0);
      }
      out[name] = { p50_ms: round(median(ms), 2), p99_ms: round(percentile(ms, 99), 2) };
    }
    return out;
  } finally {
    await closeBuses();
    for (const k of ['FLOTILLA_FLEET_HOST'])
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    here.cleanup();
    there?.cleanup();
  }
}

async function slots(bus, cycles) {
  const [{ layoutFor, ensureState }, { busFor, closeBuses }, { acquireRunning }] = await Promise.all([
    load('layout/layout.js'),
    load('bus/open.js'),
    load('fleet/fleet-slot.js'),
  ]);
  const p = tempProject('flotilla-bench-bus-sl-');
  const layout = layoutFor(p.root, p.dir);
  ensureState(layout);
  const caps = busFor(layout, await fleetConfig(bus)).caps;
  try {
    // Warm: the connection and the bucket.
    (await acquireRunning(layout, 4, caps, 'warm-000001'))?.release();
    const take = [];
    const t0 = performance.now();
    for (let i = 0; i < cycles; i++) {
      const a = performance.now();
      const hold = await acquireRunning(layout, 4, caps, `slot-${String(i).padStart(6, '0')}`);
      take.push(performance.now() - a);
      if (!hold) throw new Error(`no slot on cycle ${i}`);
      hold.release();
    }
    const ms = performance.now() - t0;
    return { cap: 4, ...stats(take), cycles_per_sec: round(cycles / (ms / 1000)) };
  } finally {
    await closeBuses();
    p.cleanup();
  }
}

/**
 * What the server itself takes on this machine, without Flotilla's files: revision-checked KV
 * updates of a record-sized value (a record put, a slot renewal) and de-duplicated stream
 * publishes (a message), 64 in flight from one client process. Client and server share the
 * machine's cores, so this is a floor for a server on a host of its own.
 */
async function serverOps(url, count) {
  const { connect: natsConnect } = await import('@nats-io/transport-node');
  const { jetstream, jetstreamManager } = await import('@nats-io/jetstream');
  const { Kvm } = await import('@nats-io/kv');
  const nc = await natsConnect({ servers: url });
  try {
    const js = jetstream(nc);
    const kv = await new Kvm(js).create('BENCH_KV', { history: 1 });
    const value = new TextEncoder().encode(JSON.stringify({ pad: 'x'.repeat(1800) }));
    const revs = new Map();
    const run = async (op) => {
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: 64 }, async () => {
          while (next < count) await op(next++);
        }),
      );
      return Math.round(count / ((performance.now() - t0) / 1000));
    };
    // 500 keys, each updated with the revision it last had: what a renewal or a record put does.
    const keys = 500;
    for (let k = 0; k < keys; k++) revs.set(k, await kv.put(`k${k}`, value));
    const kvUpdates = await run(async (i) => {
      const k = i % keys;
      const prev = revs.get(k);
      revs.set(k, -1);
      // A key another worker is updating right now is put without a check (its revision is in flight).
      revs.set(k, prev > 0 ? await kv.update(`k${k}`, value, prev) : await kv.put(`k${k}`, value));
    });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'BENCH_MAIL', subjects: ['bench.mail.>'], duplicate_window: 3_600_000_000_000 });
    const body = new TextEncoder().encode('y'.repeat(1000));
    const publishes = await run((i) => js.publish(`bench.mail.r${i % 50}`, body, { msgID: `m${i}` }));
    await jsm.streams.delete('BENCH_MAIL');
    await new Kvm(js).create('BENCH_KV').then((b) => b.destroy());
    return {
      ops: count,
      in_flight: 64,
      kv_updates_per_sec: kvUpdates,
      value_bytes: value.length,
      js_publishes_per_sec: publishes,
      body_bytes: body.length,
    };
  } finally {
    await nc.close();
  }
}

export async function runBusBench(opts = {}) {
  const only = new Set(opts.only ?? ['delivery', 'throughput', 'status', 'reads', 'slots', 'server']);
  const server = opts.nats ? null : await ownNats();
  const nats = opts.nats ?? server.url;
  const out = { bench: 'bus', load_average: (await import('node:os')).loadavg().map((x) => round(x, 1)) };
  try {
    for (const [name, bus] of [
      ['maildir', 'maildir'],
      ['nats', nats],
    ]) {
      const r = (out[name] = {});
      if (only.has('delivery')) r.delivery = await delivery(bus, opts.messages ?? 100, opts.gapMs ?? 40);
      if (only.has('throughput')) r.throughput = await throughput(bus, opts.throughput ?? 2000);
      if (only.has('status')) r.status = await status(bus, opts.records ?? 5000, opts.runs ?? 7);
      if (only.has('reads'))
        r.reads = [await reads(bus, 100, opts.runs ?? 7), await reads(bus, opts.records ?? 5000, opts.runs ?? 7)];
      if (only.has('slots')) r.slots = await slots(bus, opts.cycles ?? 200);
    }
    if (only.has('server')) out.nats.server = await serverOps(nats, opts.ops ?? 5000);
    if (only.has('side'))
      out.status_side_by_side = [
        await statusSideBySide(nats, 100, opts.runs ?? 7),
        await statusSideBySide(nats, opts.records ?? 5000, opts.runs ?? 7),
      ];
  } finally {
    server?.stop();
  }
  out.load_average_after = (await import('node:os')).loadavg().map((x) => round(x, 1));
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const val = (flag) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : args[i + 1];
  };
  const num = (flag) => (val(flag) === undefined ? undefined : Number(val(flag)));
  const r = await runBusBench({
    only: val('--only')?.split(','),
    nats: val('--nats'),
    messages: num('--messages'),
    gapMs: num('--gap-ms'),
    throughput: num('--throughput'),
    records: num('--records'),
    runs: num('--runs'),
    cycles: num('--cycles'),
    ops: num('--ops'),
  });
  process.stdout.write(JSON.stringify(r, null, 2) + '\n');
}
