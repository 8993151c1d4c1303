import { createRecord } from '../../src/fleet/registry.js';
import type { Layout } from '../../src/layout/layout.js';
import { recordInput } from '../helpers/records.js';

/** Registers an agent record (no process behind it), enough for addressing. */
export function addAgent(
  layout: Layout,
  id: string,
  lineage: { parentId?: string | null; rootId?: string; depth?: number; status?: 'working' | 'completed' } = {},
): void {
  const now = new Date().toISOString();
  createRecord(
    layout,
    recordInput(id, {
      name: id.replace(/-[^-]*$/, ''),
      parentId: lineage.parentId ?? null,
      rootId: lineage.rootId ?? id,
      depth: lineage.depth ?? 0,
      cwd: layout.project,
      mode: 'headless',
      status: lineage.status ?? 'working',
      startedAt: now,
      finishedAt: lineage.status === 'completed' ? now : null,
      effectivePolicy: { tools: [], permissionMode: 'default', secrets: [] },
      background: true,
      spawnedBy: lineage.parentId ? 'agent' : 'human',
    }),
  );
}
