// Spawn → harness ready (registered, status 'working', i.e. watching its inbox) over 20
// spawns, and SIGKILL of a working child → its parent's crashed completion. Real tmux on a
// private server, the built CLI, scripted models. Run: node bench/spawn.mjs (prints JSON).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, percentile, round, SPAWN_AGENT, tempProject, tmuxKill } from './lib.mjs';

const FIX = fileURLToPath(new URL('../test/fixtures/spawn/', import.meta.url));

function run(file, args, env, cwd) {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => resolve({ code, out: out.trim(), err, at: performance.now() }));
  });
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

async function until(pred, timeoutMs, pollMs = 2) {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const v = pred();
    if (v) return v;
    if (performance.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

function completions(root, owner, from) {
  let n = 0;
  for (const sub of ['new', 'cur']) {
    let names = [];
    try {
      names = readdirSync(join(root, 'state/inbox', owner, sub));
    } catch {
      continue;
    }
    for (const f of names) {
      const text = readFileSync(join(root, 'state/inbox', owner, sub, f), 'utf8');
      if (/\nkind: completion\n/.test(text) && text.includes(`\nfrom: ${from}\n`)) n++;
    }
  }
  return n;
}

export async function runSpawnBench({ spawns = 20 } = {}) {
  const p = tempProject('flotilla-bench-spawn-');
  const socket = `flotilla-bench-${process.pid}`;
  mkdirSync(join(p.root, 'agents'), { recursive: true });
  writeFileSync(
    join(p.root, 'config.yaml'),
    'agents:\n  default_permission_mode: dont_ask\nlimits:\n  max_running: 32\n  max_children: 8\n',
  );
  for (const [name, script] of [
    ['lead', 'lead-one-sleeper.yaml'],
    ['sleeper', 'sleeper.yaml'],
  ]) {
    writeFileSync(
      join(p.root, 'agents', `${name}.md`),
      `---\nname: ${name}\ndescription: bench\nmodel: script:${join(FIX, script)}\n---\nbench\n`,
    );
  }
  // The bench's own worker stays 'working' long enough to be seen: a slow first token.
  const worker = join(p.dir, 'worker.yaml');
  writeFileSync(worker, 'replies:\n  - text: "done"\n    latency_ms: 400\n');
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    XDG_CONFIG_HOME: join(p.dir, 'xdg'),
    FLOTILLA_TMUX_SOCKET: socket,
  };
  const ready = [];
  const cliExit = [];
  const registered = [];
  try {
    for (let i = 0; i < spawns; i++) {
      const id = `b${i}`;
      const t0 = performance.now();
      // The record's startedAt (harness registered) against the spawn call's start, too.
      const wall0 = Date.now();
      const cli = run(SPAWN_AGENT, ['--oneshot', '--id', id, '--model', `script:${worker}`, 'go'], env, p.dir);
      const file = join(p.root, 'state/agents', `${id}.json`);
      await until(() => ['working', 'completed'].includes(readJson(file)?.status), 15_000);
      ready.push(performance.now() - t0);
      registered.push(Date.parse(readJson(file).startedAt) - wall0);
      const r = await cli;
      if (r.code !== 0) throw new Error(`spawn ${id} failed: ${r.err}`);
      cliExit.push(r.at - t0);
    }
    // Kill -9 of a working child → its parent's crashed completion.
    const lead = await run(SPAWN_AGENT, ['--agent', 'lead', '--id', 'lead-b', 'go'], env, p.dir);
    if (lead.code !== 0) throw new Error(`lead failed: ${lead.err}`);
    const child = await until(
      () => {
        const r = readJson(join(p.root, 'state/agents/s-one.json'));
        return r && r.status === 'working' && r.lastLine.startsWith('$ sleep') && r;
      },
      20_000,
      20,
    );
    const t0 = performance.now();
    process.kill(child.pid, 'SIGKILL');
    await until(() => completions(p.root, 'lead-b', 's-one') > 0, 10_000);
    const kill9 = performance.now() - t0;
    return {
      spawns,
      spawn_to_working_ms: {
        median: round(median(ready)),
        p95: round(percentile(ready, 95)),
        min: round(Math.min(...ready)),
        max: round(Math.max(...ready)),
      },
      spawn_to_registered_ms: { median: round(median(registered)), p95: round(percentile(registered, 95)) },
      spawn_agent_exit_ms: { median: round(median(cliExit)), p95: round(percentile(cliExit, 95)) },
      kill9_to_parent_completion_ms: round(kill9),
    };
  } finally {
    tmuxKill(socket);
    // Harnesses and reapers finish their last writes after the server goes: retry the removal.
    for (let i = 0; ; i++) {
      await new Promise((r) => setTimeout(r, 250));
      try {
        p.cleanup();
        break;
      } catch (err) {
        if (i > 40) throw err;
      }
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await runSpawnBench(), null, 2));
}
