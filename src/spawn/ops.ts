import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import type { FleetOps } from '../tools/fleet-agents.js';

/** The fleet tools' operations bound to one agent as parent (§6). */
export function fleetOpsFor(_layout: Layout, _config: Config, _rec: AgentRecord): FleetOps {
  const later = () => Promise.reject(new FlotillaError('spawning from the model is being wired in this change'));
  return { spawn: later, list: later, wait: later, cancel: later };
}
