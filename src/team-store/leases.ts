import { resolve } from 'node:path';
import { sharedKvFor } from '../bus/shared.js';
import { fleetConfig } from '../bus/settings.js';
import { FlotillaError } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import type { Lease } from '../leases/lease.js';
import type { TakeOutcome } from '../leases/leases.js';
import type { LeaseView } from '../leases/list.js';
import { askedSpec, releasedText, takenText, type LeaseAsk } from '../leases/request.js';
import { sleep } from '../sleep.js';
import * as kv from './leases-kv.js';

/**
 * The lease operations every door calls (docs/design.md §16), kept where `fleet.bus` says:
 * this host's lease files on `maildir` (leases/, per repository), or the fleet's LEASES bucket
 * on `nats://` (leases-kv.ts, per repository), so agents on two hosts working in clones of one
 * repository meet on the same file (docs/decisions-hosts.md "One board and one set of leases on the bus").
 */

async function store(layout: Layout) {
  const s = await sharedKvFor(layout, 'leases');
  return s && { kv: s, fleet: (await fleetConfig(layout)).fleet };
}

/** How often `--wait` on the bus tries again: the bus keeps no queue, so waiters take turns by trying. */
const WAIT_POLL_MS = 500;

export async function takeByName(layout: Layout, ask: LeaseAsk): Promise<{ outcome: TakeOutcome; text: string }> {
  const s = await store(layout);
  if (!s) return (await import('../leases/request.js')).takeByName(layout, ask);
  const spec = askedSpec(layout, ask);
  const deadline = ask.timeoutMs === undefined ? Infinity : Date.now() + ask.timeoutMs;
  let outcome = await kv.takeLeasesKv(layout, s.kv, s.fleet, spec);
  if (!outcome.ok && ask.wait) {
    ask.onQueued?.(
      `waiting: ${outcome.conflict.path} is held by ${outcome.conflict.lease.holder}; trying again until it is free`,
    );
    while (!outcome.ok && Date.now() < deadline) {
      if (ask.signal?.aborted) throw new FlotillaError('stopped waiting for the lease', { code: 'aborted' });
      await sleep(WAIT_POLL_MS, ask.signal);
      outcome = await kv.takeLeasesKv(layout, s.kv, s.fleet, spec);
    }
  }
  return { outcome, text: takenText(ask, spec, outcome) };
}

export async function releaseByName(
  layout: Layout,
  by: string,
  cwd: string,
  paths: string[] | undefined,
): Promise<string> {
  const s = await store(layout);
  if (!s) return (await import('../leases/request.js')).releaseByName(layout, by, cwd, paths);
  const released = await kv.releaseLeasesKv(
    layout,
    s.kv,
    s.fleet,
    by,
    paths?.map((p) => resolve(cwd, p)),
    `released by ${by}`,
  );
  return releasedText(released);
}

export async function listLeases(layout: Layout): Promise<LeaseView[]> {
  const s = await store(layout);
  if (!s) return (await import('../leases/list.js')).listLeases(layout);
  return kv.listLeasesKv(layout, s.kv);
}

/** `lease check --staged`: the staged files another holder's lease covers, one line each (leases/staged.ts). */
export async function stagedConflicts(layout: Layout, by: string, cwd: string): Promise<string[]> {
  const s = await store(layout);
  const { stagedConflicts: check } = await import('../leases/staged.js');
  if (!s) return check(layout, by, cwd);
  return check(layout, by, cwd, (checkout) => kv.repoLeasesKv(layout, s.kv, s.fleet, checkout));
}

/** The lease a write or edit needs, taken if not already held (leases/leases.ts `leaseForEdit`). */
export async function leaseForEdit(
  layout: Layout,
  file: string,
  holder: string,
  task: number | null,
  via: string,
): Promise<TakeOutcome> {
  const s = await store(layout);
  if (!s) return (await import('../leases/leases.js')).leaseForEdit(layout, file, holder, task, via);
  return kv.leaseForEditKv(layout, s.kv, s.fleet, file, holder, task, via);
}

/** Every lease of a holder that ended goes. */
export async function releaseAllOf(
  layout: Layout,
  holder: string,
  reason: string,
): Promise<{ checkout: string; lease: Lease }[]> {
  const s = await store(layout);
  if (!s) return (await import('../leases/leases.js')).releaseAllOf(layout, holder, reason);
  return kv.releaseAllOfKv(layout, s.kv, holder, reason);
}

/** A holder's task ended: its leases taken for it without a ttl go. */
export async function sweepHolder(layout: Layout, holder: string): Promise<void> {
  const s = await store(layout);
  if (!s) return (await import('../leases/leases.js')).sweepHolder(layout, holder);
  return kv.sweepHolderKv(layout, s.kv, holder);
}
