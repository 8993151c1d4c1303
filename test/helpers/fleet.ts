import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive } from '../../src/fleet/proc.js';
import { listRecords } from '../../src/fleet/registry.js';
import { ensureState, layoutFor, type Layout } from '../../src/layout/layout.js';
import { removePatiently } from './home.js';

/** A real temporary project with a fleet root; `cleanup()` removes it. */
export interface TempFleet {
  project: string;
  layout: Layout;
  cleanup(): void;
}

export function tempFleet(prefix = 'flotilla-test-'): TempFleet {
  const project = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const layout = layoutFor(join(project, '.flotilla'), project);
  ensureState(layout);
  return {
    project,
    layout,
    cleanup: () => removePatiently(project, () => stopHarnesses(layout)),
  };
}

/** SIGKILLs every live harness process of a fleet (pid and start time from the registry). */
export function stopHarnesses(layout: Layout): void {
  for (const rec of listRecords(layout)) {
    // Lineage tests register the test process itself as a harness: never kill ourselves.
    if (
      rec.pid === null ||
      rec.pid === process.pid ||
      rec.pid === process.ppid ||
      !isProcessAlive(rec.pid, rec.pidStartTime)
    )
      continue;
    try {
      process.kill(rec.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

export function tempDir(prefix = 'flotilla-tmp-'): { dir: string; cleanup(): void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { dir, cleanup: () => removePatiently(dir, () => undefined) };
}

/**
 * Waits until no registered harness process of the fleet is alive (they finish their last
 * writes after tmux is killed), so a temp fleet can be removed without racing them.
 */
export async function agentsExited(layout: Layout, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const live = listRecords(layout).filter((r) => r.pid !== null && isProcessAlive(r.pid, r.pidStartTime));
    if (live.length === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A test's teardown: its tmux server killed, then its fleet removed once the harnesses in it have exited. */
export async function closeTmuxFleet(
  tmux: { kill(): Promise<void> } | undefined,
  fleet: TempFleet | undefined,
): Promise<void> {
  await tmux?.kill();
  if (fleet) await agentsExited(fleet.layout);
  fleet?.cleanup();
}
