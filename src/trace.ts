import { appendFileSync } from 'node:fs';

/**
 * Start-up spans for `bench/` (docs/benchmarks.md, "Where the start-up time goes"): with
 * FLOTILLA_TRACE=<file> set (it passes to spawned agents like every FLOTILLA_* setting), each
 * mark appends one line `{"span","t","origin","pid","cpu"}` — `t` the wall-clock time in ms,
 * `origin` when this process started, `cpu` this process's CPU time so far in ms (user +
 * system: on a loaded machine the wall clock mostly measures the others). Unset, a mark costs
 * one environment lookup.
 */
export function traceMark(span: string): void {
  const file = process.env.FLOTILLA_TRACE;
  if (!file) return;
  try {
    appendFileSync(
      file,
      JSON.stringify({
        span,
        t: performance.timeOrigin + performance.now(),
        origin: performance.timeOrigin,
        pid: process.pid,
        cpu: cpuMs(),
      }) + '\n',
    );
  } catch {
    // A trace that cannot be written never stops the agent.
  }
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return Math.round((user + system) / 100) / 10;
}
