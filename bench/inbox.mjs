#!/usr/bin/env node
// Inbox benchmark (§14), run against the built dist/ (npm run build first):
//   node bench/inbox.mjs [--messages 1000] [--senders 50] [--each 200] [--idle-secs 3]
// Prints one JSON document. bench/run.mjs imports `runInboxBench(opts)` and gets the same object.
//  - latency_inotify / latency_polling: link() into new/ (the instant of delivery, §4) → message
//    reported by watchInbox(), ms; `send_call` adds the sender's own work (write + 2 fsyncs)
//  - load: N sender processes × M messages to one inbox while this process claims them; wall
//    time and lost / duplicated / partial counts (each body carries a sha256 of itself)
//  - throughput_vs_floor: msg/s into one inbox from one process (64 in flight, and one at a
//    time), next to the same syscalls in a bare Node loop: `--throughput [N] [rounds]`
//  - idle: CPU used by an open watcher over a quiet interval
//  - claim_vs_floor: N unread messages read and claimed 32 at a time (as a harness does), next
//    to a bare rename() of as many files: `--claim [N] [rounds]`
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const DIST = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, DIST).href);

async function modules() {
  const [{ layoutFor, ensureState }, { deliver }, { claim }, { ensureMaildir }, { readItem }, { watchInbox }] =
    await Promise.all([
      load('layout/layout.js'),
      load('inbox/deliver.js'),
      load('inbox/claim.js'),
      load('inbox/maildir.js'),
      load('inbox/read.js'),
      load('inbox/watch.js'),
    ]);
  return { layoutFor, ensureState, deliver, claim, ensureMaildir, readItem, watchInbox };
}

function tempFleet(m) {
  const project = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-bench-')));
  const layout = m.layoutFor(join(project, '.flotilla'), project);
  m.ensureState(layout);
  return { layout, cleanup: () => rmSync(project, { recursive: true, force: true }) };
}

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const r = (x) => Math.round(x * 100) / 100;
  return {
    n: s.length,
    p50_ms: r(q(0.5)),
    p99_ms: r(q(0.99)),
    max_ms: r(s.at(-1)),
    mean_ms: r(s.reduce((a, b) => a + b, 0) / s.length),
  };
}

/** Latency deliver → watcher, one message in flight at a time (what an agent conversation looks like). */
async function latencyInotify(m, count) {
  const f = tempFleet(m);
  const w = m.watchInbox(f.layout, 'bench', {});
  let waiting;
  w.on('message', (item) => {
    const t = performance.now();
    void m.claim(f.layout, 'bench', item);
    waiting?.(t);
  });
  await w.ready;
  const samples = [];
  const fromCall = [];
  try {
    for (let i = 0; i < count; i++) {
      const got = new Promise((r) => (waiting = r));
      const t0 = performance.now();
      let tLink = 0;
      await m.deliver(
        f.layout,
        { from: 'bench', to: 'bench', kind: 'message', body: `m${i}` },
        {
          beforeLink: () => {
            tLink = performance.now();
          },
        },
      );
      const t1 = await got;
      samples.push(t1 - tLink);
      fromCall.push(t1 - t0);
    }
  } finally {
    await w.close();
    f.cleanup();
  }
  return { ...stats(samples), polling: w.polling, send_call: stats(fromCall) };
}

/** Polling latency: messages sent every `gapMs` without waiting (polling is slow; sequential would take minutes). */
async function latencyPolling(m, count, gapMs = 10) {
  const f = tempFleet(m);
  const w = m.watchInbox(f.layout, 'bench', { poll: 'always' });
  const linked = new Map();
  const samples = [];
  let all;
  const done = new Promise((r) => (all = r));
  w.on('message', (item) => {
    samples.push(performance.now() - linked.get(item.message.id));
    void m.claim(f.layout, 'bench', item);
    if (samples.length === count) all();
  });
  await w.ready;
  try {
    for (let i = 0; i < count; i++) {
      const id = `${Date.now().toString(36).padStart(9, '0')}${String(i).padStart(10, '0')}`;
      await m.deliver(
        f.layout,
        { id, from: 'bench', to: 'bench', kind: 'message', body: `m${i}` },
        { beforeLink: () => void linked.set(id, performance.now()) },
      );
      await new Promise((r) => setTimeout(r, gapMs));
    }
    await done;
  } finally {
    await w.close();
    f.cleanup();
  }
  return { ...stats(samples), polling: w.polling, send_gap_ms: gapMs, poll_interval_ms: 100 };
}

function verify(body) {
  const x = /^([\s\S]*)sha256:([0-9a-f]{64})\n$/.exec(body);
  return x !== null && createHash('sha256').update(x[1]).digest('hex') === x[2];
}

/** N sender processes × M messages to one inbox, this process claiming concurrently. */
async function loadRun(m, senders, each) {
  const f = tempFleet(m);
  const box = m.ensureMaildir(f.layout, 'bench');
  const self = fileURLToPath(import.meta.url);
  const t0 = performance.now();
  let running = senders;
  let failed = 0;
  for (let i = 0; i < senders; i++) {
    execFile(process.execPath, [self, '--sender', f.layout.root, 'bench', String(i), String(each)], (err) => {
      if (err) failed++;
      running--;
    });
  }
  const ids = new Set();
  const perSender = new Map();
  let duplicated = 0;
  let partial = 0;
  try {
    for (;;) {
      const finished = running === 0;
      const names = readdirSync(box.new);
      for (const name of names) {
        const item = await m.readItem(f.layout, 'bench', join(box.new, name));
        if (!item) continue;
        if (!verify(item.message.body)) partial++;
        if ((await m.claim(f.layout, 'bench', item)).status !== 'claimed') continue;
        if (ids.has(item.message.id)) duplicated++;
        ids.add(item.message.id);
        const [, s, q] = /^sender (\d+) seq (\d+)\n/.exec(item.message.body) ?? [];
        if (!perSender.has(s)) perSender.set(s, new Set());
        perSender.get(s).add(q);
      }
      if (finished && names.length === 0) break;
      if (names.length === 0) await new Promise((r) => setTimeout(r, 5));
    }
    const wall = performance.now() - t0;
    let received = 0;
    for (const set of perSender.values()) received += set.size;
    return {
      senders,
      each,
      expected: senders * each,
      claimed: ids.size,
      lost: senders * each - received,
      duplicated,
      partial,
      failed_senders: failed,
      wall_ms: Math.round(wall),
      msgs_per_sec: Math.round((ids.size / wall) * 1000),
    };
  } finally {
    f.cleanup();
  }
}

/**
 * Throughput into one inbox from one process: `count` messages with `concurrency`
 * deliveries in flight, each durable (file fsync, link, directory fsync) before it resolves.
 */
async function throughput(m, count, concurrency) {
  const f = tempFleet(m);
  const box = m.ensureMaildir(f.layout, 'bench');
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await m.deliver(f.layout, { from: 'bench', to: 'bench', kind: 'message', body: `message ${i}` });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wall = performance.now() - t0;
  const delivered = readdirSync(box.new).length;
  f.cleanup();
  return {
    messages: count,
    concurrency,
    delivered,
    wall_ms: Math.round(wall),
    msgs_per_sec: Math.round((count / wall) * 1000),
  };
}

/**
 * The floor under `throughput`: the same syscalls per message with no Flotilla code
 * in between — open(O_EXCL), write, fsync, close, link, unlink, and an fsync of new/ — in a
 * bare Node loop, with `concurrency` in flight. On a disk whose flush takes milliseconds this,
 * not our code, bounds msg/s; deliver's figure is reported as a ratio to it.
 */
async function throughputFloor(count, concurrency) {
  const { open, link, unlink, mkdir } = await import('node:fs/promises');
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-bench-floor-')));
  await mkdir(join(dir, 'tmp'));
  await mkdir(join(dir, 'new'));
  const data = Buffer.from(
    `---\nid: 0mwrhkm7suessw7cr9j\nfrom: bench\nto: bench\nkind: message\nsummary: m\npriority: normal\ntimestamp: 2026-11-23T00:00:00.000Z\n---\nmessage\n`,
  );
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const tmp = join(dir, 'tmp', `m${i}`);
      const fh = await open(tmp, 'wx');
      await fh.write(data);
      await fh.sync();
      await fh.close();
      await link(tmp, join(dir, 'new', `m${i}`));
      await unlink(tmp);
      const d = await open(join(dir, 'new'), 'r');
      await d.sync();
      await d.close();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wall = performance.now() - t0;
  rmSync(dir, { recursive: true, force: true });
  return { messages: count, concurrency, wall_ms: Math.round(wall), msgs_per_sec: Math.round((count / wall) * 1000) };
}

/** deliver() against the bare floor, interleaved `rounds` times so both see the same disk and load. */
async function throughputVsFloor(m, count, rounds = 3) {
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    runs.push({
      deliver_concurrent: (await throughput(m, count, 64)).msgs_per_sec,
      floor_concurrent: (await throughputFloor(count, 64)).msgs_per_sec,
      deliver_sequential: (await throughput(m, Math.min(300, count), 1)).msgs_per_sec,
      floor_sequential: (await throughputFloor(Math.min(300, count), 1)).msgs_per_sec,
    });
  }
  const med = (k) => [...runs.map((x) => x[k])].sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  const summary = Object.fromEntries(
    ['deliver_concurrent', 'floor_concurrent', 'deliver_sequential', 'floor_sequential'].map((k) => [k, med(k)]),
  );
  return {
    messages: count,
    rounds,
    runs,
    median_msgs_per_sec: summary,
    ratio_to_floor: {
      concurrent: Math.round((summary.deliver_concurrent / summary.floor_concurrent) * 100) / 100,
      sequential: Math.round((summary.deliver_sequential / summary.floor_sequential) * 100) / 100,
    },
    load_average: (await import('node:os')).loadavg().map((x) => Math.round(x * 10) / 10),
  };
}

/** Runs `fn` over `items` with `width` calls in flight, as the harness's UnreadMail does. */
async function batched(items, width, fn) {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

/**
 * `count` unread messages: read (readItem) and claimed, 32 at a time; wall and CPU ms (every
 * thread of this process: the file calls run on libuv's) for each half.
 */
async function readAndClaim(m, count) {
  const f = tempFleet(m);
  const box = m.ensureMaildir(f.layout, 'bench');
  await batched(
    Array.from({ length: count }, (_, i) => i),
    64,
    (i) => m.deliver(f.layout, { from: 'bench', to: 'bench', kind: 'message', body: `message ${i}` }),
  );
  const names = readdirSync(box.new);
  const cpu = (since) => {
    const u = process.cpuUsage(since);
    return (u.user + u.system) / 1000;
  };
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const items = [];
  await batched(names, 32, async (n) => items.push(await m.readItem(f.layout, 'bench', join(box.new, n))));
  const t1 = performance.now();
  const readCpu = cpu(c0);
  const c1 = process.cpuUsage();
  let claimed = 0;
  await batched(items, 32, async (item) => {
    if ((await m.claim(f.layout, 'bench', item)).status === 'claimed') claimed++;
  });
  const t2 = performance.now();
  const claimCpu = cpu(c1);
  const left = readdirSync(box.new).length;
  f.cleanup();
  if (claimed !== count || left !== 0) throw new Error(`claimed ${claimed} of ${count}, ${left} left in new/`);
  return { read_ms: t1 - t0, claim_ms: t2 - t1, read_cpu_ms: readCpu, claim_cpu_ms: claimCpu };
}

/** The floor under a claim: a bare rename(new/x → cur/x:2,S) of `count` files, 32 at a time. */
async function renameFloor(count) {
  const { mkdir, rename, writeFile } = await import('node:fs/promises');
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-bench-floor-')));
  await mkdir(join(dir, 'new'));
  await mkdir(join(dir, 'cur'));
  const names = Array.from({ length: count }, (_, i) => `m${i}`);
  await batched(names, 64, (n) => writeFile(join(dir, 'new', n), 'x'));
  const t0 = performance.now();
  await batched(names, 32, (n) => rename(join(dir, 'new', n), join(dir, 'cur', `${n}:2,S`)));
  const ms = performance.now() - t0;
  rmSync(dir, { recursive: true, force: true });
  return ms;
}

/** Reading and claiming against the bare rename floor, interleaved `rounds` times (same disk, same load). */
async function claimVsFloor(m, count, rounds = 5) {
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    const { read_ms, claim_ms, read_cpu_ms, claim_cpu_ms } = await readAndClaim(m, count);
    const floor_ms = await renameFloor(count);
    // Speed as a share of the floor's (1 = as fast as a bare rename).
    runs.push({
      read_ms,
      claim_ms,
      floor_ms,
      claim_ratio: floor_ms / claim_ms,
      read_ratio: floor_ms / read_ms,
      read_cpu_ms,
      claim_cpu_ms,
    });
  }
  const med = (k) => [...runs.map((x) => x[k])].sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  const perSec = (ms) => Math.round((count / ms) * 1000);
  return {
    messages: count,
    rounds,
    median_msgs_per_sec: {
      read: perSec(med('read_ms')),
      claim: perSec(med('claim_ms')),
      floor: perSec(med('floor_ms')),
    },
    // Each round's figure against its own floor, then the median: the floor moves with the machine's load.
    claim_to_floor: Math.round(med('claim_ratio') * 100) / 100,
    read_to_floor: Math.round(med('read_ratio') * 100) / 100,
    // CPU per message hardly moves with the machine's load, where wall time does.
    cpu_us_per_msg: {
      read: Math.round((med('read_cpu_ms') / count) * 1000 * 10) / 10,
      claim: Math.round((med('claim_cpu_ms') / count) * 1000 * 10) / 10,
    },
    load_average: (await import('node:os')).loadavg().map((x) => Math.round(x * 10) / 10),
  };
}

/** CPU used by an open, quiet watcher (inotify): should be ~0. */
async function idleCpu(m, secs) {
  const f = tempFleet(m);
  const w = m.watchInbox(f.layout, 'bench', {});
  await w.ready;
  const before = process.cpuUsage();
  await new Promise((r) => setTimeout(r, secs * 1000));
  const used = process.cpuUsage(before);
  await w.close();
  f.cleanup();
  const cpuMs = (used.user + used.system) / 1000;
  return { secs, cpu_ms: Math.round(cpuMs * 10) / 10, cpu_percent: Math.round((cpuMs / (secs * 1000)) * 10000) / 100 };
}

export async function runInboxBench(opts = {}) {
  const m = await modules();
  const messages = opts.messages ?? 1000;
  return {
    bench: 'inbox',
    node: process.version,
    latency_inotify: await latencyInotify(m, messages),
    latency_polling: await latencyPolling(m, messages),
    throughput_vs_floor: await throughputVsFloor(m, opts.throughput ?? 2000),
    claim_vs_floor: await claimVsFloor(m, opts.claim ?? 2000),
    load: await loadRun(m, opts.senders ?? 50, opts.each ?? 200),
    idle: await idleCpu(m, opts.idleSecs ?? 3),
  };
}

async function sender([root, to, index, count]) {
  const m = await modules();
  const layout = m.layoutFor(root);
  for (let seq = 0; seq < Number(count); seq++) {
    const text = `sender ${index} seq ${seq}\n${randomBytes(50 + ((seq * 97) % 1500)).toString('base64')}\n`;
    const body = `${text}sha256:${createHash('sha256').update(text).digest('hex')}\n`;
    await m.deliver(layout, { from: `sender-${index}`, to, kind: 'message', body });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  if (args[0] === '--sender') {
    await sender(args.slice(1));
  } else if (args[0] === '--claim') {
    const m = await modules();
    const n = Number(args[1] ?? 2000);
    process.stdout.write(JSON.stringify(await claimVsFloor(m, n, Number(args[2] ?? 5)), null, 2) + '\n');
  } else if (args[0] === '--throughput') {
    const m = await modules();
    const n = Number(args[1] ?? 5000);
    process.stdout.write(JSON.stringify(await throughputVsFloor(m, n, Number(args[2] ?? 3)), null, 2) + '\n');
  } else {
    const num = (flag) => {
      const i = args.indexOf(flag);
      return i === -1 ? undefined : Number(args[i + 1]);
    };
    const result = await runInboxBench({
      messages: num('--messages'),
      senders: num('--senders'),
      each: num('--each'),
      idleSecs: num('--idle-secs'),
    });
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  }
}
