import type { Config } from '../config/schema.js';
import { refusal } from '../errors.js';
import { callerLineage } from '../inbox/caller.js';
import type { Layout } from '../layout/layout.js';
import { decodeLineage, type RemoteLineage } from './lineage.js';

/**
 * The receiving side of an agent's spawn on another host (docs/design.md §17.5): `flotilla
 * spawn --lineage …` makes the new agent the child of an agent on the host that sent it. It
 * is taken only from a caller with no agent among its process ancestors and no door to speak
 * through — a person, which is what the other host's ssh login is. An agent of this host
 * (from its shell, detached or not, or through its door, which refuses the flag outright)
 * cannot make itself a child of anyone this way (docs/security-trust.md "Hosts").
 */
export async function acceptLineage(layout: Layout, config: Config, text: string): Promise<RemoteLineage> {
  const caller = await callerLineage(layout);
  const agent = caller.parent?.id ?? caller.forged;
  if (agent) {
    throw refusal(
      'lineage-refused',
      `spawn refused: --lineage is given only by another host's Flotilla over ssh, and this command comes from agent ${agent} — drop --lineage; spawn-agent makes your child from who you are`,
      { agent },
    );
  }
  const lineage = decodeLineage(text);
  // The child's completion and mail travel to its parent's host on the bus; on maildir they could not.
  if (config.fleet.bus === 'maildir') {
    throw refusal(
      'host-no-bus',
      `spawn refused: ${lineage.parent.id} on host '${lineage.host}' asked for a child here, but this host's fleet.bus is maildir, which cannot carry its completion back — set fleet.bus (the same nats:// server and fleet.name as '${lineage.host}') in this host's config`,
      { parent: lineage.parent.id, host: lineage.host },
    );
  }
  return lineage;
}
