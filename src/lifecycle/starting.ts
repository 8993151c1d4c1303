import { audit } from '../audit/audit.js';
import type { AgentRecord } from '../fleet/record.js';
import { selfProcess } from '../fleet/proc.js';
import { updateRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';

/**
 * An agent's process begins (§5): its record says `starting` with its process's pid (this process's, or the pane's
 * whose shim the shim host runs), and the audit has its start.
 */
export function markStarting(
  layout: Layout,
  id: string,
  proc: { pid: number; start: string | null } = selfProcess(),
): AgentRecord {
  const rec = updateRecord(layout, id, {
    status: 'starting',
    pid: proc.pid,
    pidStartTime: proc.start,
    startedAt: new Date().toISOString(),
  });
  audit(layout, {
    event: 'agent_start',
    agent: rec.id,
    parent: rec.parentId ?? 'human',
    depth: rec.depth,
    model: rec.model,
    mode: rec.mode,
    runtime: rec.runtime,
  });
  return rec;
}
