import { closeSync, mkdirSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from '../layout/layout.js';

/**
 * The records `flotilla gc` removed from this host's registry whose keys on a `nats://` bus it
 * has still to remove (`state/bus-gc/<id>`, one empty file each): written before the registry
 * file goes, removed once the bus holds nothing of the record (src/bus/nats/gc.ts). So a gc
 * that could not reach the bus leaves its part to the next, and the bus part touches only
 * records this fleet root removed — never those of another fleet root that shares its host name.
 */
export function oweBusGc(layout: Layout, id: string): void {
  mkdirSync(layout.busGcOwed, { recursive: true });
  closeSync(openSync(join(layout.busGcOwed, id), 'a'));
}

export function owedBusGc(layout: Layout): string[] {
  try {
    return readdirSync(layout.busGcOwed).filter((n) => !n.startsWith('.'));
  } catch {
    return [];
  }
}

export function settleBusGc(layout: Layout, id: string): void {
  try {
    unlinkSync(join(layout.busGcOwed, id));
  } catch {
    /* settled already */
  }
}
