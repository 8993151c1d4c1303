import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import { maildirBus } from './maildir.js';
import type { Bus } from './types.js';

export type { Bus, BusReach, MailBus } from './types.js';

const buses = new Map<string, Bus>();

/**
 * The fleet's bus (`fleet.bus`, §18), one per fleet root and URL in a process: connections
 * are opened on first use and kept, so a harness sending many messages connects once.
 */
export function busFor(layout: Layout, config: Pick<Config, 'fleet'>): Bus {
  const url = config.fleet.bus;
  const key = `${layout.root}\0${url}`;
  let bus = buses.get(key);
  if (!bus) {
    bus = url === 'maildir' ? maildirBus(layout) : lazyNats(layout, url, config.fleet);
    buses.set(key, bus);
  }
  return bus;
}

/**
 * A `nats://` bus whose code (and the NATS client) loads on first use: busFor stays
 * synchronous, and a command that never sends never loads it.
 */
function lazyNats(layout: Layout, url: string, fleet: Config['fleet']): Bus {
  let impl: Promise<Bus> | undefined;
  const load = () => (impl ??= import('./nats/mail.js').then((m) => m.natsBus(layout, url, fleet)));
  return {
    url,
    kind: 'nats',
    mail: {
      deliver: async (draft, opts) => (await load()).mail.deliver(draft, opts),
      claim: async (owner, item) => (await load()).mail.claim(owner, item),
      receive: async (owners) => (await load()).mail.receive(owners),
      collect: async (owners) => (await load()).mail.collect(owners),
    },
    reach: async () => (await load()).reach(),
    close: async () => { if (impl) await (await impl).close(); },
  };
}

/** Closes every bus this process opened (flushing what it can): call before a CLI exits. */
export async function closeBuses(): Promise<void> {
  const all = [...buses.values()];
  buses.clear();
  await Promise.all(all.map((b) => b.close()));
}

/**
 * Where the CLI's entry finds closeBuses once a command is done, without importing this
 * module (and its bus code) into every command's start-up: an open NATS connection would
 * otherwise keep the process alive.
 */
export const CLOSE_BUSES = Symbol.for('flotilla.closeBuses');
(globalThis as Record<symbol, unknown>)[CLOSE_BUSES] = closeBuses;
