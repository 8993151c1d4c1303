#!/usr/bin/env node
// The dashboard's refresh with 5,000 records, maildir next to nats:// (docs/design.md §17.6),
// against the built dist/:  node bench/dashboard-hosts.mjs [--records 5000] [--runs 15] [--idle-secs 20]
// Starts its own nats-server (Debian's `nats-server -js`) on a free port with a temporary store.
//  - refresh: one refresh as the dashboard does it, in this process (median and p99 ms of
//    `runs`): on maildir the reader of this host's registry holding the N finished records; on
//    nats:// this host's registry empty and the N records another host's (b), in the RECORDS
//    bucket — the reader plus one poll of the bus (records and heartbeats) and the grouping.
//  - idle CPU: a real `flotilla watch` in a 120×40 tmux window, left alone for `idle-secs`:
//    the share of one core it used (utime + stime from /proc), and on nats:// the server's share
//    meanwhile (it serves only the dashboard's reads).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, percentile, round, tempProject, tmuxKill } from './lib.mjs';
import { populate } from './scale.mjs';

const DIST = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, DIST).href);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const FLEET = 'benchdash';

async function ownNats() {
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
  for (let i = 0; ; i++) {
    const up = await new Promise((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (i > 600) throw new Error('nats-server did not start');
    await sleep(50);
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: proc.pid,
    stop: () => {
      proc.kill('SIGKILL');
      rmSync(store, { recursive: true, force: true });
    },
  };
}

async function fleetConfig(bus, host) {
  const { defaultConfig } = await load('config/schema.js');
  const d = defaultConfig();
  return { ...d, fleet: { ...d.fleet, bus, name: FLEET, host } };
}

/** N finished records of host b, published into the bucket by b (as its processes do). */
async function recordsOnBus(bus, n) {
  const [{ layoutFor, ensureState }, { busFor, closeBuses }, { listRecords }] = await Promise.all([
    load('layout/layout.js'),
    load('bus/open.js'),
    load('fleet/registry.js'),
  ]);
  const there = tempProject('flotilla-bench-dash-b-');
  populate(there.root, n);
  const dir = join(there.root, 'state', 'agents');
  for (const f of readdirSync(dir))
    writeFileSync(
      join(dir, f),
      JSON.stringify({ ...JSON.parse(readFileSync(join(dir, f), 'utf8')), host: 'b' }) + '\n',
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
  await pub.beat();
  await closeBuses();
  return there;
}

async function refresh(bus, here, runs) {
  const [{ layoutFor }, { FleetReader }, { withOtherHosts }, { busFor, closeBuses }, { otherHosts }] =
    await Promise.all([
      load('layout/layout.js'),
      load('watch/gather.js'),
      load('watch/host-rows.js'),
      load('bus/open.js'),
      load('spawn/host-groups.js'),
    ]);
  const layout = layoutFor(here.root, here.dir);
  const reader = new FleetReader(layout);
  const b = bus === 'maildir' ? null : busFor(layout, await fleetConfig(bus, 'a'));
  const samples = [];
  let rows = 0;
  for (let r = 0; r < runs + 1; r++) {
    const t0 = performance.now();
    const local = reader.snapshot(Date.now());
    const snap = b ? withOtherHosts(local, 'a', await otherHosts(b, 'a', new Set()), Date.now()) : local;
    // The first is a warm-up (module loading, the connection).
    if (r > 0) samples.push(performance.now() - t0);
    rows = snap.rows.length;
  }
  await closeBuses();
  return { runs, rows_read: rows, p50_ms: round(percentile(samples, 50)), p99_ms: round(percentile(samples, 99)) };
}

function cpuSecs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 (1-based) of the whole line, in clock ticks (100/s on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function idleCpu(bus, here, secs, serverPid) {
  const socket = `flotilla-bench-dash-${process.pid}-${bus === 'maildir' ? 'm' : 'n'}`;
  const env = {
    PATH: process.env.PATH,
    HOME: here.dir,
    LANG: 'C.UTF-8',
    FLOTILLA_ROOT: here.root,
    FLOTILLA_FLEET_BUS: bus,
    FLOTILLA_FLEET_NAME: FLEET,
    FLOTILLA_FLEET_HOST: 'a',
    FLOTILLA_TMUX_SOCKET: socket,
  };
  const e = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  try {
    const r = spawnSync(
      'tmux',
      [
        '-L',
        socket,
        'new-session',
        '-d',
        '-P',
        '-F',
        '#{pane_pid}',
        '-x',
        '120',
        '-y',
        '40',
        '-c',
        here.dir,
        ...e,
        process.execPath,
        CLI,
        'watch',
      ],
      { encoding: 'utf8', env: { PATH: process.env.PATH } },
    );
    const pid = Number(r.stdout.trim());
    if (!pid) throw new Error(`watch did not start: ${r.stderr}`);
    // Settled: the first frame drawn and, on nats://, the first poll of the bus shown.
    const shows = bus === 'maildir' ? /agents?,/ : /Host b —/;
    for (
      let i = 0;
      !shows.test(spawnSync('tmux', ['-L', socket, 'capture-pane', '-p'], { encoding: 'utf8' }).stdout);
      i++
    ) {
      if (i > 600) throw new Error('the dashboard did not show its fleet');
      await sleep(100);
    }
    await sleep(3000);
    const before = cpuSecs(pid);
    const serverBefore = serverPid ? cpuSecs(serverPid) : 0;
    await sleep(secs * 1000);
    const used = cpuSecs(pid) - before;
    // The server answers the dashboard's reads: its CPU meanwhile is the dashboard's too (nothing else uses it).
    const served = serverPid ? cpuSecs(serverPid) - serverBefore : null;
    return {
      idle_secs: secs,
      cpu_secs_per_min: round((used * 60) / secs, 2),
      cpu_percent: round((100 * used) / secs, 2),
      ...(served === null ? {} : { server_cpu_percent: round((100 * served) / secs, 2) }),
    };
  } finally {
    tmuxKill(socket);
  }
}

export async function runDashboardHostsBench(opts = {}) {
  const n = opts.records ?? 5000;
  const server = await ownNats();
  const out = {
    bench: 'dashboard-hosts',
    records: n,
    load_average: (await import('node:os')).loadavg().map((x) => round(x, 1)),
  };
  try {
    for (const [name, bus] of [
      ['maildir', 'maildir'],
      ['nats', server.url],
    ]) {
      const here = tempProject('flotilla-bench-dash-a-');
      const { layoutFor, ensureState } = await load('layout/layout.js');
      ensureState(layoutFor(here.root, here.dir));
      const there = bus === 'maildir' ? null : await recordsOnBus(bus, n);
      if (!there) populate(here.root, n);
      try {
        out[name] = {
          where: there ? "another host's, on the bus" : "this host's registry",
          refresh: await refresh(bus, here, opts.runs ?? 15),
          watch: await idleCpu(bus, here, opts.idleSecs ?? 20, there ? server.pid : null),
        };
      } finally {
        here.cleanup();
        there?.cleanup();
      }
    }
  } finally {
    server.stop();
  }
  out.load_average_after = (await import('node:os')).loadavg().map((x) => round(x, 1));
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const num = (flag) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : Number(args[i + 1]);
  };
  const r = await runDashboardHostsBench({
    records: num('--records'),
    runs: num('--runs'),
    idleSecs: num('--idle-secs'),
  });
  process.stdout.write(JSON.stringify(r, null, 2) + '\n');
}
