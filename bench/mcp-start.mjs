// §14: what a `flotilla mcp` start costs before its client can make its first request, build
// against build. Per start: `node <main.js> mcp` in a project with a fleet, as a person (no agent
// among its ancestors), sent initialize, initialized and tools/list at once on stdin; measured at
// the tools/list answer: wall (from the spawn) and CPU (the sum of the server's threads' run time,
// /proc/<pid>/task/*/schedstat, so ES module loader and GC threads count), and the initialize
// answer's wall. One start per build first (its code cache written), then runs interleaved (run i
// of every build before run i+1 of any), each with the load average; medians, and the median of
// the per-run ratios against the first build. The tools listed must be the same for every build.
// --cold: every start with an empty cache folder (a fresh home's first start; the vendor bench's fleets have one).
//   node bench/mcp-start.mjs [--runs 10] [--cold] [--compare <main.js>]…   (this build's dist/cli/main.js last)
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, median, round, tempProject } from './lib.mjs';

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf('--runs') + 1] || 10);
const builds = [...args.flatMap((a, i) => (a === '--compare' ? [args[i + 1]] : [])), CLI];
const cold = args.includes('--cold');
let starts = 0;
const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

const REQUESTS = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
];

/** CPU time of every thread of a live process, in ms. */
function cpuMs(pid) {
  let ns = 0;
  for (const t of readdirSync(`/proc/${pid}/task`))
    ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
  return ns / 1e6;
}

/** One server start, up to its tools/list answer; then its input closes and it ends. */
function start(cli, cwd, env) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const own = cold ? { ...env, XDG_CACHE_HOME: join(env.XDG_CACHE_HOME, String(starts++)) } : env;
    const child = spawn(process.execPath, [cli, 'mcp'], { cwd, env: own, stdio: ['pipe', 'pipe', 'inherit'] });
    child.on('error', reject);
    child.stdin.write(REQUESTS.map((m) => JSON.stringify(m) + '\n').join(''));
    let buf = '';
    let init;
    child.stdout.on('data', (d) => {
      buf += d;
      for (let i; (i = buf.indexOf('\n')) !== -1; buf = buf.slice(i + 1)) {
        const m = JSON.parse(buf.slice(0, i));
        if (m.id === 1) init = performance.now() - t0;
        if (m.id !== 2) continue;
        const r = { wall: performance.now() - t0, init, cpu: cpuMs(child.pid), tools: JSON.stringify(m.result.tools) };
        child.on('exit', () => resolve(r));
        child.stdin.end();
      }
    });
  });
}

const p = tempProject('flotilla-bench-mcp-');
const env = { ...process.env, FLOTILLA_ROOT: p.root, HOME: join(p.dir, 'home'), XDG_CACHE_HOME: join(p.dir, 'cache') };
for (const k of Object.keys(env)) if (k.startsWith('FLOTILLA_') && k !== 'FLOTILLA_ROOT') delete env[k];
try {
  const warm = [];
  for (const cli of builds) warm.push(await start(cli, p.dir, env));
  if (new Set(warm.map((w) => w.tools)).size !== 1) throw new Error('the builds list different tools');
  const rows = builds.map(() => []);
  for (let i = 0; i < runs; i++) {
    const load = loadAverage();
    for (const [k, cli] of builds.entries()) rows[k].push({ ...(await start(cli, p.dir, env)), load });
  }
  for (const [k, cli] of builds.entries()) {
    const r = rows[k];
    const ratio = (f) => median(r.map((x, i) => rows[0][i][f] / x[f]));
    console.log(
      `${cli}\n  cpu ${round(median(r.map((x) => x.cpu)), 0)} ms, tools/list ${round(median(r.map((x) => x.wall)), 0)} ms, ` +
        `initialize ${round(median(r.map((x) => x.init)), 0)} ms` +
        (k === 0
          ? ''
          : `; first build / this one, per run: cpu ${round(ratio('cpu'), 2)}, tools/list ${round(ratio('wall'), 2)}`),
    );
  }
  const loads = rows[0].map((x) => x.load);
  console.log(
    `${runs} runs each${cold ? ', each with no code cache' : ''}, load average ${Math.min(...loads)}–${Math.max(...loads)}`,
  );
} finally {
  p.cleanup();
}
