import type { Config } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import { selfHost } from '../../hosts/self.js';
import type { Layout } from '../../layout/layout.js';
import { busNames } from '../names.js';
import type { Bus, BusReach } from '../types.js';
import { natsAudit } from './audit.js';
import { natsLink } from './link.js';
import { natsMail } from './mail.js';
import { natsRecords } from './records.js';

/**
 * `fleet.bus: nats://host:port` (§18): mail on the fleet's stream, records in its KV
 * buckets and each host's audit lines on its audit stream, over one connection per process. Loaded only for a `nats://`
 * bus (bus/open.ts).
 */
export function natsBus(
  layout: Layout,
  url: string,
  config: Pick<Config, 'fleet'> & Partial<Pick<Config, 'hosts'>>,
): Omit<Bus, 'caps'> {
  const { fleet } = config;
  const names = busNames(layout, fleet.name, selfHost(fleet));
  const connection = natsLink(url, fleet.nats);
  const mail = natsMail(layout, names, connection);
  const lostAfterMs = (host: string) => 1000 * (config.hosts?.[host]?.lost_after_secs ?? fleet.lost_after_secs);
  const records = natsRecords(layout, names, connection, { self: selfHost(fleet), lostAfterMs });
  const audit = natsAudit(layout, names, connection, selfHost(fleet), fleet.audit_max_age_secs * 1000);
  return {
    url,
    kind: 'nats',
    mail: mail.mail,
    records: records.records,
    audit: audit.audit,
    // Loaded only by `flotilla gc`: no other process pays for it.
    gc: async (opts) =>
      (await import('./gc.js')).gcBus(layout, names, connection, {
        self: selfHost(fleet),
        now: opts?.now ?? Date.now(),
      }),
    async reach(): Promise<BusReach> {
      const waiting = await mail.waiting();
      const held = waiting > 0 ? `; ${waiting} message(s) waiting in the outbox` : '';
      try {
        const version = await (await connection.reads()).account();
        return { ok: true, detail: `${url} (nats-server ${version}, fleet ${names.key})${held}`, version };
      } catch (err) {
        return { ok: false, detail: `${url} unreachable: ${errorMessage(err)}${held}` };
      }
    },
    async close() {
      // What this process wrote reaches the bus before the connection goes (end-of-life records, queued mail).
      await records.drain();
      await audit.close();
      await mail.flush();
      await mail.stop();
      await connection.close();
    },
  };
}
