import { FlotillaError } from '../errors.js';
import { selfProcess } from '../fleet/proc.js';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';
import { leaseLapsed } from './lapse.js';
import { resolveTarget, sweepCheckout, takeLeases, type TakeOutcome, type TakeSpec } from './leases.js';
import { readLeaseFile, withLeaseLock, writeLeaseFile } from './store.js';

/**
 * Wait instead of fail (docs/design.md §16): the caller is put in line for the paths, and
 * whoever frees them — a release, or any writer's sweep of a lease whose holder ended —
 * hands them to the oldest waiter under the same lock. This process only watches its
 * checkout's file (one read per poll, no lock) and sweeps when it sees a lease lapse.
 */

const POLL_MS = 200;

export async function takeWhenFree(
  layout: Layout,
  spec: TakeSpec,
  opts: { signal?: AbortSignal; timeoutMs?: number; onQueued?: (o: TakeOutcome) => void } = {},
): Promise<TakeOutcome> {
  const me = selfProcess();
  const queue = { pid: me.pid, pidStart: me.start };
  let outcome = await takeLeases(layout, spec, { queue });
  if (outcome.ok) return outcome;
  opts.onQueued?.(outcome);
  const checkout = outcome.conflict.checkout;
  const rels = spec.targets.map((t) => resolveTarget(t).rel);
  const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  try {
    for (;;) {
      if (opts.signal?.aborted) throw new FlotillaError('stopped waiting for the lease', { code: 'aborted' });
      if (Date.now() > deadline) return outcome;
      await sleep(POLL_MS);
      const file = readLeaseFile(layout, checkout);
      const inLine = file.waiting.some((w) => w.pid === queue.pid && w.holder === spec.holder);
      if (!inLine) {
        const mine = rels.every((r) => file.leases.some((l) => l.holder === spec.holder && l.path === r));
        if (mine)
          return {
            ok: true,
            taken: file.leases
              .filter((l) => l.holder === spec.holder && rels.includes(l.path))
              .map((lease) => ({ checkout, lease })),
          };
        // Dropped from the line without the lease (a sweep took this process for dead): queue again.
        outcome = await takeLeases(layout, spec, { queue });
        if (outcome.ok) return outcome;
        continue;
      }
      if (file.leases.some((l) => leaseLapsed(layout, l))) await sweepCheckout(layout, checkout);
    }
  } finally {
    await leaveLine(layout, checkout, spec.holder, queue.pid).catch(() => undefined);
  }
}

async function leaveLine(layout: Layout, checkout: string, holder: string, pid: number): Promise<void> {
  if (!readLeaseFile(layout, checkout).waiting.some((w) => w.pid === pid && w.holder === holder)) return;
  await withLeaseLock(layout, checkout, () => {
    const file = readLeaseFile(layout, checkout);
    file.waiting = file.waiting.filter((w) => !(w.pid === pid && w.holder === holder));
    writeLeaseFile(layout, file);
  });
}
