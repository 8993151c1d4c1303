// What containment costs per tool command. The same `sh -c true` run plain, in its
// own pid namespace under the namespace init (the default on Linux), and in the bubblewrap
// sandbox (`security.sandbox: bubblewrap`). The three are interleaved so load on a shared
// machine falls on all alike; wall time per command (median, p90) and CPU time of the
// children per command (from /proc/self/stat cutime+cstime, which count waited-for children).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, percentile, round } from './lib.mjs';

const SANDBOX = pathToFileURL(fileURLToPath(new URL('../dist/tools/sandbox.js', import.meta.url))).href;
const TICK_MS = 10; // USER_HZ is 100 on Linux

function childCpuMs() {
  const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(f[13]) + Number(f[14])) * TICK_MS; // cutime, cstime (fields 16, 17)
}

export async function runNamespaceBench({ runs = 150 } = {}) {
  if (process.platform !== 'linux') return { skipped: `${process.platform} has no pid namespaces` };
  const sb = await import(SANDBOX);
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-ns-bench-')));
  try {
    const project = join(dir, 'project');
    mkdirSync(join(project, '.flotilla', 'agent-memory', 'a'), { recursive: true });
    mkdirSync(join(project, '.git'), { recursive: true });
    const argv = ['sh', '-c', 'true'];
    const modes = { plain: [...argv] };
    const ns = sb.pidNamespace();
    if (ns.available) modes.pid_namespace = sb.pidNamespaceArgv(argv, ns);
    let bwrap;
    try {
      bwrap = sb.findBubblewrap();
    } catch {
      bwrap = undefined;
    }
    if (bwrap) {
      const readOnly = sb.hostExecutedPaths({
        fleetRoot: join(project, '.flotilla'),
        project,
        cwd: project,
        home: join(dir, 'home'),
        userConfigDir: join(dir, 'home', '.config', 'flotilla'),
      });
      modes.bubblewrap = sb.bubblewrapArgv(
        {
          writable: [project, join(project, '.flotilla', 'agent-memory', 'a')],
          readOnly,
          network: false,
          bwrap,
          userNamespace: sb.bubblewrapUserNamespace(bwrap),
        },
        argv,
      );
    }
    const wall = Object.fromEntries(Object.keys(modes).map((k) => [k, []]));
    const cpu = Object.fromEntries(Object.keys(modes).map((k) => [k, 0]));
    for (let i = 0; i < runs; i++) {
      for (const [name, [cmd, ...args]] of Object.entries(modes)) {
        const c0 = childCpuMs();
        const t0 = performance.now();
        // fd 3 is where the namespace init reports the command's exit status.
        const r = spawnSync(cmd, args, { cwd: project, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
        wall[name].push(performance.now() - t0);
        cpu[name] += childCpuMs() - c0;
        if (r.status !== 0) throw new Error(`${name}: ${cmd} failed (${r.status}): ${r.stderr}`);
      }
    }
    const out = {
      runs,
      command: 'sh -c true',
      load_avg_1m: round(Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]), 2),
    };
    for (const name of Object.keys(modes)) {
      out[name] = {
        wall_ms_median: round(median(wall[name])),
        wall_ms_p90: round(percentile(wall[name], 90)),
        cpu_ms_per_command: round(cpu[name] / runs),
      };
    }
    if (!ns.available) out.pid_namespace = { skipped: ns.reason };
    if (!bwrap) out.bubblewrap = { skipped: 'bwrap not installed' };
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(await runNamespaceBench(), null, 2));
}
