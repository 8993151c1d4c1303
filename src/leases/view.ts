import type { Conflict } from './leases.js';
import type { LeaseView } from './list.js';
import type { Lease } from './lease.js';

/** How leases read for a model and a person (docs/design.md §16). */

function ago(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

function until(l: Lease): string {
  if (l.expires_at) return `until ${l.expires_at}`;
  return l.holder === 'human' ? 'until released' : 'until its task ends';
}

/**
 * A refused change: who holds the lease, since when, and what to do. The same words for our
 * tools' results and a vendor CLI's hook denial, so every model reads one message.
 */
export function conflictMessage(c: Conflict, what: string, now = Date.now()): string {
  const l = c.lease;
  const held = l.path === c.path ? c.path : `${l.path} (which covers ${c.path})`;
  const who = l.holder === 'human' ? 'a person (human)' : `agent ${l.holder}`;
  return (
    `refused: ${held} is leased to ${who} since ${l.taken_at} (${ago(l.taken_at, now)}) for "${l.why}", ${until(l)}; ${what}. ` +
    `Message ${l.holder} to ask for it (send_message to "${l.holder}"), wait for it (lease_paths with "wait": true, or flotilla lease take --wait ${c.path}), or work on other files.`
  );
}

/** `lease list` as text: one line per lease, then who waits. */
export function formatLeases(views: LeaseView[], now = Date.now()): string {
  if (views.length === 0) return 'no leases';
  const out: string[] = [];
  for (const v of views) {
    out.push(`${v.checkout}`);
    for (const l of v.leases)
      out.push(`  ${l.path}  ${l.holder}  since ${ago(l.taken_at, now)}  ${until(l)}  ${l.why}`);
    for (const w of v.waiting) out.push(`  waiting: ${w.holder} for ${w.paths.join(', ')} since ${ago(w.since, now)}`);
  }
  return out.join('\n');
}
