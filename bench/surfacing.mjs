#!/usr/bin/env node
// Surfacing benchmark, against the built dist/ (npm run build first):
//   node bench/surfacing.mjs [--unread 10000] [--messages 200] [--gap-ms 40]
// Prints one JSON document; bench/run.mjs imports `runSurfacingBench(opts)`.
//  - claim_at_start: N messages waiting in new/ when a one-shot agent starts; ms from the
//    harness start to new/ empty (all surfaced in one turn and claimed), and claims/s
//  - busy_agent: an interactive agent (tmux) in a long multi-turn task; messages sent one at
//    a time every gap-ms; latency = link() into new/ → the transcript's `surfaced` entry that
//    names the file (the model sees it in that turn's call). A busy agent shows mail at its
//    next turn boundary, so this is bounded by the length of a step (here ~0.5 s).
//  - idle_agent: the same agent once its task ended: link() → surfaced (a run starts on arrival)
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, percentile, round, tempProject, tmuxKill } from './lib.mjs';

const DIST = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, DIST).href);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(fn, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await fn();
    if (v) return v;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function stats(samples) {
  return {
    n: samples.length,
    p50_ms: round(percentile(samples, 50)),
    p99_ms: round(percentile(samples, 99)),
    max_ms: round(Math.max(...samples)),
  };
}

async function claimAtStart(unread) {
  const [{ layoutFor, ensureState }, { deliver }] = await Promise.all([
    load('layout/layout.js'),
    load('inbox/deliver.js'),
  ]);
  const p = tempProject('flotilla-bench-claim-');
  const layout = layoutFor(p.root, p.dir);
  ensureState(layout);
  const id = 'claimer-000001';
  for (let i = 0; i < unread; i++) await deliver(layout, { from: 'bench', to: id, kind: 'message', body: `m${i}` });
  const script = join(p.dir, 'read.yaml');
  writeFileSync(script, 'replies:\n  - text: "read them all"\n');
  const newDir = join(layout.inbox(id), 'new');
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [CLI, 'run', '--id', id, '--model', `script:${script}`, '--oneshot', 'read your mail'],
    {
      cwd: p.dir,
      env: { ...process.env, FLOTILLA_ROOT: p.root },
      stdio: 'ignore',
    },
  );
  try {
    await waitFor(() => readdirSync(newDir).length === 0, 300_000, 'new/ to empty');
    const ms = performance.now() - t0;
    return {
      unread,
      ms_to_all_claimed: Math.round(ms),
      claimed_per_sec: Math.round(unread / (ms / 1000)),
      claimed: readdirSync(join(layout.inbox(id), 'cur')).length,
    };
  } finally {
    child.kill('SIGKILL');
    p.cleanup();
  }
}

async function busyAgent(messages, gapMs) {
  const [{ layoutFor }, { deliver }, { readTranscript }] = await Promise.all([
    load('layout/layout.js'),
    load('inbox/deliver.js'),
    load('transcript/reader.js'),
  ]);
  const p = tempProject('flotilla-bench-busy-');
  const layout = layoutFor(p.root, p.dir);
  const socket = `flotilla-bench-${process.pid}`;
  const steps = Array.from(
    { length: 400 },
    (_, i) => `  - { text: "step ${i}", tool_calls: [{ tool: shell, input: { command: "sleep 0.3" } }] }`,
  ).join('\n');
  const script = join(p.dir, 'busy.yaml');
  writeFileSync(script, `defaults: { latency_ms: 200 }\nreplies:\n${steps}\n`);
  const idleScript = join(p.dir, 'idle.yaml');
  writeFileSync(
    idleScript,
    'replies:\n  - when: { kind: inbox }\n    repeat: true\n    text: "ok"\n  - text: "ready"\n',
  );
  const run = async (name, model, prompt) => {
    const env = [
      '-e',
      `FLOTILLA_ROOT=${p.root}`,
      '-e',
      'FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE=dont_ask',
      '-e',
      'FLOTILLA_LIMITS_MAX_TURNS=1000',
      '-e',
      'FLOTILLA_LIMITS_TIMEOUT_SECS=3600',
    ];
    spawn(
      'tmux',
      [
        '-L',
        socket,
        'new-session',
        '-d',
        '-s',
        name,
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
        name,
        '--model',
        `script:${model}`,
      ],
      { stdio: 'ignore' },
    );
    const rec = () => {
      try {
        return JSON.parse(readFileSync(layout.registryFile(name), 'utf8'));
      } catch {
        return null;
      }
    };
    await waitFor(() => rec()?.status === 'idle' || rec()?.status === 'working', 60_000, `${name} to start`);
    if (prompt) spawn('tmux', ['-L', socket, 'send-keys', '-t', name, prompt, 'Enter'], { stdio: 'ignore' });
    return rec;
  };
  const measure = async (id, isBusy) => {
    const linked = new Map();
    for (let i = 0; i < messages; i++) {
      if (isBusy() === false) break;
      await deliver(
        layout,
        { from: 'bench', to: id, kind: 'message', body: `b${i}` },
        { beforeLink: (tmp) => void linked.set(tmp.split('/').pop(), Date.now()) },
      );
      await sleep(gapMs);
    }
    const seen = new Map();
    await waitFor(
      () => {
        for (const e of readTranscript(layout, id).entries)
          if (e.type === 'surfaced' && e.source === 'inbox')
            for (const f of e.files ?? []) if (!seen.has(f)) seen.set(f, Date.parse(e.ts));
        return [...linked.keys()].every((f) => seen.has(f));
      },
      60_000,
      'every message surfaced',
    );
    return stats([...linked].map(([f, t]) => Math.max(0, seen.get(f) - t)));
  };
  try {
    const busyRec = await run('busy-000001', script, 'do the 400 steps');
    await waitFor(() => busyRec()?.status === 'working' && busyRec()?.turns > 1, 60_000, 'the task to run');
    const busy = await measure('busy-000001', () => busyRec()?.status === 'working');
    await run('idle-000001', idleScript, '');
    const idle = await measure('idle-000001', () => true);
    return {
      busy_agent: { ...busy, gap_ms: gapMs, step: 'model 200 ms + shell sleep 0.3 s' },
      idle_agent: { ...idle, gap_ms: gapMs },
    };
  } finally {
    tmuxKill(socket);
    p.cleanup();
  }
}

export async function runSurfacingBench(opts = {}) {
  return {
    bench: 'surfacing',
    claim_at_start: await claimAtStart(opts.unread ?? 10_000),
    ...(await busyAgent(opts.messages ?? 200, opts.gapMs ?? 40)),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const num = (flag) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : Number(args[i + 1]);
  };
  const r = await runSurfacingBench({ unread: num('--unread'), messages: num('--messages'), gapMs: num('--gap-ms') });
  process.stdout.write(JSON.stringify(r, null, 2) + '\n');
}
