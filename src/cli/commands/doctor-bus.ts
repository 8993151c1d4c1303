import type { Config } from '../../config/schema.js';
import type { Layout } from '../../layout/layout.js';
import type { Check } from './doctor-checks.js';

/** nats-server's first release to make a stream's store before it lists the stream (src/bus/nats/store-window.ts). */
const STORE_FIRST = '2.9.15';

/**
 * The fleet's bus (§18), when `fleet.bus` names one: reachable from here, and its server's version. A nats-server
 * before 2.9.15 (Debian 12's is 2.9.10) is a WARN: Flotilla's own reads never touch a stream it is still making,
 * but any other client of that server (a person's `nats` CLI, another tool) can crash it there.
 */
export async function busCheck(layout: Layout, config: Config | undefined): Promise<Check | null> {
  if (!config || config.fleet.bus === 'maildir') return null;
  const { busFor, closeBuses } = await import('../../bus/open.js');
  const { storeMayBeMissing } = await import('../../bus/nats/store-window.js');
  const name = `bus (fleet.bus: ${config.fleet.bus})`;
  try {
    const r = await busFor(layout, config).reach();
    // Its detail says what to do.
    if (!r.ok) return { name, ok: false, detail: r.detail, fix: '' };
    const old = r.version !== undefined && /^v?\d+\.\d+\.\d+/.test(r.version) && storeMayBeMissing(r.version);
    return {
      name,
      ok: true,
      warn: old,
      detail: old
        ? `${r.detail}: a nats-server before ${STORE_FIRST} crashes when a client reads a stream it is still making (Flotilla's reads never do; other clients of it can)`
        : r.detail,
      fix: old
        ? `upgrade nats-server to ${STORE_FIRST} or newer (the release binary from nats.io, or a newer distribution's package)`
        : '',
    };
  } finally {
    await closeBuses();
  }
}
