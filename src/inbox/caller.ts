import { findParentAgent, type FindParentOptions, type Lineage } from '../fleet/lineage.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { DOOR_ENV, fleetWritable, sendThroughDoor } from './door.js';

/**
 * Who runs this command (§5.1, docs/security.md "The door"): the agent among its process
 * ancestors; inside an agent's sandbox, where the harness is not among the processes it can
 * see, the agent whose door it reaches — the harness's word, not the environment's, so the
 * agent's own `FLOTILLA_AGENT_ID` is no longer taken for a forgery there and an unset one
 * does not make it a person. Only where the fleet root is read-only is the door asked:
 * outside a sandbox ancestry is the proof, and a `FLOTILLA_DOOR` naming another agent's door
 * changes nothing.
 */
export async function callerLineage(layout: Layout, opts: FindParentOptions = {}): Promise<Lineage> {
  const env = opts.env ?? process.env;
  const lineage = findParentAgent(layout, opts);
  if (lineage.parent) return lineage;
  const door = env[DOOR_ENV];
  if (!door || fleetWritable(door)) return lineage;
  const { id } = await sendThroughDoor(door, { op: 'whoami' }, 10_000);
  const rec = typeof id === 'string' ? readRecord(layout, id) : null;
  return rec ? { parent: rec } : lineage;
}
