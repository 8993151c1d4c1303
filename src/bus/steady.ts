import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { Layout } from '../layout/layout.js';
import { BEAT_MS } from './presence.js';

/**
 * How long this host has reached the bus without a gap (design §17.8): a reader may call
 * another host silent only over a window in which it heard the bus itself. After an outage
 * every host's last beat is old; without this, the first host to beat again would mark every
 * other host's agents lost before they had a chance to beat. Kept in a file of the fleet root
 * (`state/host-steady.json`, `{since, last}` by this machine's clock) because any process of
 * the host may be the one that beats.
 */
interface Steady {
  since: number;
  last: number;
}

/** A gap this long between two puts of this host's beat starts the window again. */
const GAP_MS = 3 * BEAT_MS;

/** This host's beat reached the bus now. */
export function reached(layout: Layout, now = Date.now()): void {
  const prev = read(layout);
  const since = prev && now - prev.last <= GAP_MS ? prev.since : now;
  try {
    const tmp = `${layout.hostSteady}.${process.pid}`;
    writeFileSync(tmp, JSON.stringify({ since, last: now } satisfies Steady));
    renameSync(tmp, layout.hostSteady);
  } catch {
    // Not known: readers here mark nothing until it is written again.
  }
}

/** This host's beat did not reach the bus: the window starts again at the next that does. */
export function missed(layout: Layout): void {
  rmSync(layout.hostSteady, { force: true });
}

/** How long this host has heard the bus without a gap, 0 when it has not lately. */
export function steadyMs(layout: Layout, now = Date.now()): number {
  const s = read(layout);
  return s && now - s.last <= GAP_MS ? now - s.since : 0;
}

function read(layout: Layout): Steady | undefined {
  try {
    const s = JSON.parse(readFileSync(layout.hostSteady, 'utf8')) as Partial<Steady>;
    return typeof s.since === 'number' && typeof s.last === 'number' ? { since: s.since, last: s.last } : undefined;
  } catch {
    return undefined;
  }
}
