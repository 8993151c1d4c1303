// Shared helpers for the benchmarks: real processes, real temp fleets, medians.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
export const SPAWN_AGENT = fileURLToPath(new URL('../tools/spawn-agent', import.meta.url));

export function percentile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
export const median = (v) => percentile(v, 50);
export const round = (n, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

/** A temporary git project with a fleet root; `cleanup()` removes it. */
export function tempProject(prefix = 'flotilla-bench-') {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  mkdirSync(join(dir, '.git'));
  const root = join(dir, '.flotilla');
  return {
    dir,
    root,
    cleanup: () => {
      // Harnesses finishing after tmux is killed would write into what we delete.
      stopHarnesses(root);
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
      } catch {
        /* leave it in /tmp */
      }
    },
  };
}

/** SIGKILLs every harness process registered in a fleet root. */
export function stopHarnesses(root) {
  const dir = join(root, 'state', 'agents');
  let names = [];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return;
  }
  for (const f of names) {
    try {
      const { pid } = JSON.parse(readFileSync(join(dir, f), 'utf8'));
      if (pid && pid !== process.pid) process.kill(pid, 'SIGKILL');
    } catch {
      /* gone or unreadable */
    }
  }
}

/** Wall time of one run of a command, in ms. */
export function timeRun(cmd, args, opts = {}) {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], ...opts });
  const ms = performance.now() - t0;
  if (r.status !== 0 && !opts.allowFail) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return ms;
}

export function tmuxKill(socket) {
  spawnSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
}
