import { FlotillaError } from '../errors.js';
import { findInFleet } from '../hosts/elsewhere.js';
import { resolveRecipient } from '../inbox/address.js';
import type { Layout } from '../layout/layout.js';
import type { Bus } from './types.js';

/**
 * A recipient as this host's registry resolves it (§4), or — on `nats://`, for an id or
 * unique prefix only another host knows — as the fleet's records on the bus do (§18): mail to
 * an agent on another host goes out on the bus, which its host's harness spools. Still an
 * unknown recipient when no host knows it, so nothing is ever sent to a made-up inbox.
 */
export async function resolveAcrossHosts(layout: Layout, bus: Bus, to: string, sender: string): Promise<string> {
  try {
    return resolveRecipient(layout, to, sender);
  } catch (err) {
    if (bus.kind !== 'nats' || !(err instanceof FlotillaError) || err.code !== 'unknown-recipient') throw err;
    const found = await findInFleet(bus.records, to.trim());
    if (found) return found.id;
    throw err;
  }
}
