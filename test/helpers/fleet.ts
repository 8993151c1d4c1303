import { mkdtempSync, rmSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureState, layoutFor, type Layout } from '../../src/layout/layout.js';

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
  return { project, layout, cleanup: () => rmSync(project, { recursive: true, force: true }) };
}

export function tempDir(prefix = 'flotilla-tmp-'): { dir: string; cleanup(): void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
