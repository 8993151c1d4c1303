import { createRecord } from '../../../src/fleet/registry.js';
import type { AgentRecord, AgentStatus } from '../../../src/fleet/record.js';
import type { Layout } from '../../../src/layout/layout.js';
import { recordInput } from '../../helpers/records.js';

/** Registers a process as an agent record (what a harness does at startup). */
export function registerAgent(
  layout: Layout,
  id: string,
  opts: {
    pid: number | null;
    pidStartTime: string | null;
    parentId?: string | null;
    rootId?: string;
    depth?: number;
    status?: AgentStatus;
  },
): AgentRecord {
  return createRecord(
    layout,
    recordInput(id, {
      name: 'general',
      parentId: opts.parentId ?? null,
      rootId: opts.rootId ?? id,
      depth: opts.depth ?? 0,
      pid: opts.pid,
      pidStartTime: opts.pidStartTime,
      cwd: layout.project,
      mode: 'headless',
      status: opts.status ?? 'working',
      startedAt: new Date().toISOString(),
      effectivePolicy: { tools: [], permissionMode: 'default', secrets: [] },
      spawnedBy: opts.parentId ? 'agent' : 'human',
    }),
  );
}
