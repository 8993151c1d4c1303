import type { Layout } from '../layout/layout.js';
import { listLeases, type LeaseView } from './list.js';

/** What `status` and the dashboard show of file leases (docs/design.md §16): per agent, and as lines. */
export interface LeaseSummary {
  heldBy(id: string): { checkout: string; path: string; why: string; taken_at: string; expires_at: string | null }[];
  waitsOf(id: string): { checkout: string; paths: string[]; since: string; heldBy: string[] }[];
  /** Holders (agent ids and `human`) with at least one lease. */
  holders: Set<string>;
  /** Agents waiting in line for a lease. */
  waiters: Set<string>;
  /** One line per lease and per waiter. */
  lines: string[];
}

/** Same path, or one a folder of the other; a glob by its fixed part. Display only: a take decides with match.ts. */
function near(a: string, b: string): boolean {
  const fixed = (p: string) => {
    const segs = p.split('/');
    const glob = segs.findIndex((seg) => /[*?[{]/.test(seg));
    return (glob < 0 ? segs : segs.slice(0, glob)).join('/');
  };
  const [x, y] = [fixed(a), fixed(b)];
  return x === '' || y === '' || x === y || x.startsWith(y + '/') || y.startsWith(x + '/');
}

/**
 * The dashboard's mark per agent: `⚿ <paths>` for what it holds, `⧗ <paths> (held by <ids>)`
 * for what it waits for — the conflict, named.
 */
export function leaseMarks(s: LeaseSummary): Map<string, string> {
  const out = new Map<string, string>();
  for (const id of new Set([...s.holders, ...s.waiters])) {
    const held = s.heldBy(id).map((l) => l.path);
    const waits = s.waitsOf(id);
    const parts = [
      ...(held.length ? [`⚿ ${short(held)}`] : []),
      ...waits.map((w) => `⧗ ${short(w.paths)}${w.heldBy.length ? ` (held by ${w.heldBy.join(', ')})` : ''}`),
    ];
    out.set(id, parts.join(' '));
  }
  return out;
}

function short(paths: string[]): string {
  return paths.length > 2 ? `${paths.slice(0, 2).join(', ')} +${paths.length - 2}` : paths.join(', ');
}

/** `views`: the leases as read (default: this host's files; on a bus, the fleet's, team-store/leases.ts). */
export function leaseSummary(layout: Layout, views: readonly LeaseView[] = listLeases(layout)): LeaseSummary {
  const lines: string[] = [];
  for (const v of views) {
    for (const l of v.leases) lines.push(`  ${l.holder}  ${v.checkout}/${l.path}  since ${l.taken_at}  ${l.why}`);
    for (const w of v.waiting)
      lines.push(`  ${w.holder}  waiting for ${w.paths.map((p) => `${v.checkout}/${p}`).join(', ')}  since ${w.since}`);
  }
  return {
    heldBy: (id) =>
      views.flatMap((v) =>
        v.leases
          .filter((l) => l.holder === id)
          .map((l) => ({
            checkout: v.checkout,
            path: l.path,
            why: l.why,
            taken_at: l.taken_at,
            expires_at: l.expires_at,
          })),
      ),
    waitsOf: (id) =>
      views.flatMap((v) =>
        v.waiting
          .filter((w) => w.holder === id)
          .map((w) => ({
            checkout: v.checkout,
            paths: w.paths,
            since: w.since,
            // Who holds what it waits for: the same overlap rule as a take, without loading the glob matcher (a plain
            // prefix test).
            heldBy: [
              ...new Set(
                v.leases.filter((l) => l.holder !== id && w.paths.some((p) => near(l.path, p))).map((l) => l.holder),
              ),
            ],
          })),
      ),
    holders: new Set(views.flatMap((v) => v.leases.map((l) => l.holder))),
    waiters: new Set(views.flatMap((v) => v.waiting.map((w) => w.holder))),
    lines,
  };
}
