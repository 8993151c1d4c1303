import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import { maildirBus } from './maildir.js';
import { natsBus } from './nats/mail.js';
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
    bus = url === 'maildir' ? maildirBus(layout) : natsBus(layout, url, config.fleet);
    buses.set(key, bus);
  }
  return bus;
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
