// §14: 50 idle agents use < 2 % of one core together and ≤ 80 MB RSS each. Real harnesses
// in tmux windows on a private server, each idle after a scripted task.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SPAWN_AGENT, round, tempProject, tmuxKill } from './lib.mjs';

const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}
function rssMb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

export async function runIdleBench({ agents = 50, sampleSecs = 10, settleSecs = 15 } = {}) {
  const p = tempProject();
  const socket = `flotilla-idle-${process.pid}`;
  const env = {
    ...process.env,
    FLOTILLA_ROOT: p.root,
    FLOTILLA_TMUX_SOCKET: socket,
    FLOTILLA_LIMITS_MAX_RUNNING: String(agents + 4),
    FLOTILLA_LIMITS_MAX_SPAWNS_PER_TREE: '1000',
  };
  delete env.TMUX;
  delete env.FLOTILLA_AGENT_ID;
  const script = join(p.dir, 'done.yaml');
  writeFileSync(script, 'replies:\n  - text: "done, idling"\n');
  try {
    for (let i = 0; i < agents; i++) {
      const r = spawnSync(SPAWN_AGENT, ['--model', `script:${script}`, `idle agent ${i}`], {
        cwd: p.dir,
        env,
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`spawn ${i} failed: ${r.stderr}`);
    }
    const regDir = join(p.root, 'state', 'agents');
    const records = () =>
      readdirSync(regDir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => JSON.parse(readFileSync(join(regDir, f), 'utf8')));
    const deadline = Date.now() + 120_000;
    while (records().filter((r) => r.status === 'idle').length < agents) {
      if (Date.now() > deadline) throw new Error('agents did not all go idle within 120 s');
      await new Promise((r) => setTimeout(r, 250));
    }
    // Idle means steady state: let start-up work (V8's post-start GC and compilation) settle.
    await new Promise((r) => setTimeout(r, settleSecs * 1000));
    const pids = records().map((r) => r.pid);
    const before = pids.map(cpuTicks);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, sampleSecs * 1000));
    const secs = (performance.now() - t0) / 1000;
    const after = pids.map(cpuTicks);
    const rss = pids.map(rssMb);
    const cpuSecs = after.reduce((s, a, i) => s + (a - before[i]), 0) / TICKS;
    return {
      agents,
      settle_secs: settleSecs,
      sample_secs: round(secs),
      cpu_percent_of_one_core_total: round((cpuSecs / secs) * 100, 2),
      rss_mb: { max: round(Math.max(...rss)), mean: round(rss.reduce((a, b) => a + b, 0) / rss.length) },
    };
  } finally {
    tmuxKill(socket);
    p.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(await runIdleBench(), null, 2));
}
