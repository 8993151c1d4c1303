#!/usr/bin/env node
// The audit log on the bus (docs/design.md §9, §18), maildir next to nats://, against dist/:
//   node bench/audit-bus.mjs [--lines 20000] [--sends 15] [--read-lines 10000] [--runs 5] [--nats nats://host:port]
// Starts its own `nats-server -js` (as bench/bus.mjs does) unless --nats names one. Prints JSON.
//  - line: what one audit line costs its writer, `audit()` in a loop (µs per line). The writer's
//    code is the same on both buses: it never touches the bus (docs/decisions-hosts.md "The audit log
//    on the bus"); on nats:// the line is shipped later by a process that holds a connection,
//    measured as that shipper's time per line (`bus.audit.ship()` over `lines` owed lines).
//  - send: `flotilla send human …` cold, median wall ms of `sends` runs, on each bus, with
//    `node -e 0` beside (the §14 start-up budget).
//  - read: `flotilla audit --json` (median of `runs`) over `read-lines` lines from each of two
//    hosts: on nats:// this host's file and the other host's lines on the stream; on maildir
//    the same total in this host's file.
import { spawnSync } from 'node:child_process';
import { CLI, median, round, tempProject, timeRun } from './lib.mjs';
import { ownNats } from './bus.mjs';

const DIST = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, DIST).href);
const FLEET = 'benchaudit';

async function fleetConfig(bus, host) {
  const { defaultConfig } = await load('config/schema.js');
  const d = defaultConfig();
  return { fleet: { ...d.fleet, bus, name: FLEET, host } };
}

function envFor(p, bus, host) {
  return {
    ...process.env,
    FLOTILLA_ROOT: p.root,
    FLOTILLA_FLEET_BUS: bus,
    FLOTILLA_FLEET_NAME: FLEET,
    FLOTILLA_HOST: host,
    FLOTILLA_TMUX_SOCKET: `flotilla-bench-audit-${process.pid}`,
  };
}

/** Writes `n` audit lines into `layout`'s file the way every process does; µs per line. */
async function writeLines(layout, n, tag) {
  const { audit, closeAudit } = await load('audit/audit.js');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(layout.state, { recursive: true });
  mkdirSync(layout.registryDir, { recursive: true });
  const t0 = performance.now();
  for (let i = 0; i < n; i++)
    audit(layout, {
      event: 'tool_call',
      agent: `bench-${tag}`,
      tool: 'shell',
      command: `echo ${i}`,
      decision: 'allow',
      rule: 'bench',
    });
  const us = ((performance.now() - t0) * 1000) / n;
  closeAudit();
  return us;
}

async function line(nats, n) {
  const [{ layoutFor }, { busFor, closeBuses }] = await Promise.all([load('layout/layout.js'), load('bus/open.js')]);
  const p = tempProject('flotilla-bench-audit-');
  try {
    const layout = layoutFor(p.root, p.dir);
    const writeUs = await writeLines(layout, n, 'line');
    const bus = busFor(layout, await fleetConfig(nats, 'a'));
    await bus.audit.read({ host: 'nobody' }); // connected and the stream made, outside the timing
    const t0 = performance.now();
    let sent = 0;
    for (let got = -1; got !== 0;) {
      got = await bus.audit.ship();
      sent += got;
    }
    const ms = performance.now() - t0;
    await closeBuses();
    return {
      lines: n,
      write_us_per_line: round(writeUs, 2),
      shipped: sent,
      ship_us_per_line: round((ms * 1000) / n, 1),
      ship_lines_per_s: Math.round(n / (ms / 1000)),
    };
  } finally {
    p.cleanup();
  }
}

function send(bus, runs) {
  const p = tempProject('flotilla-bench-audit-send-');
  try {
    const env = envFor(p, bus, 'a');
    timeRun(process.execPath, [CLI, 'send', 'human', 'warm-up'], { env, cwd: p.dir });
    const ms = [];
    for (let i = 0; i < runs; i++)
      ms.push(timeRun(process.execPath, [CLI, 'send', 'human', `message ${i}`], { env, cwd: p.dir }));
    return { runs, median_ms: round(median(ms)), min_ms: round(Math.min(...ms)) };
  } finally {
    p.cleanup();
  }
}

async function read(bus, n, runs) {
  const [{ layoutFor }, { busFor, closeBuses }] = await Promise.all([load('layout/layout.js'), load('bus/open.js')]);
  const a = tempProject('flotilla-bench-audit-a-');
  const b = tempProject('flotilla-bench-audit-b-');
  try {
    const la = layoutFor(a.root, a.dir);
    if (bus === 'maildir') {
      await writeLines(la, 2 * n, 'both');
    } else {
      await writeLines(la, n, 'a');
      const lb = layoutFor(b.root, b.dir);
      await writeLines(lb, n, 'b');
      const fromB = busFor(lb, await fleetConfig(bus, 'b'));
      for (let got = -1; got !== 0;) got = await fromB.audit.ship();
      // a's own lines on the stream too, as a's harnesses would have shipped them.
      const fromA = busFor(la, await fleetConfig(bus, 'a'));
      for (let got = -1; got !== 0;) got = await fromA.audit.ship();
      await closeBuses();
    }
    const env = envFor(a, bus, 'a');
    const ms = [];
    let shown = 0;
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [CLI, 'audit', '--json'], {
        env,
        cwd: a.dir,
        maxBuffer: 1 << 30,
        encoding: 'utf8',
      });
      ms.push(performance.now() - t0);
      if (r.status !== 0) throw new Error(`flotilla audit failed: ${r.stderr}`);
      shown = r.stdout.split('\n').filter(Boolean).length;
    }
    return {
      lines_per_host: bus === 'maildir' ? null : n,
      lines_shown: shown,
      runs,
      median_ms: round(median(ms)),
      min_ms: round(Math.min(...ms)),
    };
  } finally {
    a.cleanup();
    b.cleanup();
  }
}

export async function runAuditBusBench(opts = {}) {
  const server = opts.nats ? null : await ownNats();
  const nats = opts.nats ?? server.url;
  const os = await import('node:os');
  const out = { bench: 'audit-bus', load_average: os.loadavg().map((x) => round(x, 1)) };
  try {
    out.line = await line(nats, opts.lines ?? 20_000);
    out.node_e_0_ms = round(median(Array.from({ length: 5 }, () => timeRun(process.execPath, ['-e', '0']))));
    out.send = { maildir: send('maildir', opts.sends ?? 15), nats: send(nats, opts.sends ?? 15) };
    out.read = {
      maildir: await read('maildir', opts.readLines ?? 10_000, opts.runs ?? 5),
      nats: await read(nats, opts.readLines ?? 10_000, opts.runs ?? 5),
    };
  } finally {
    server?.stop();
  }
  out.load_average_after = os.loadavg().map((x) => round(x, 1));
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const val = (flag) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : args[i + 1];
  };
  const num = (flag) => (val(flag) === undefined ? undefined : Number(val(flag)));
  const r = await runAuditBusBench({
    nats: val('--nats'),
    lines: num('--lines'),
    sends: num('--sends'),
    readLines: num('--read-lines'),
    runs: num('--runs'),
  });
  process.stdout.write(JSON.stringify(r, null, 2) + '\n');
}
