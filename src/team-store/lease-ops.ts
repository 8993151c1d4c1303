import type { Layout } from '../layout/layout.js';
import type { LeaseOperations } from '../tools/lease-paths.js';
import { formatLeases } from '../leases/view.js';
import { listLeases, releaseByName, takeByName } from './leases.js';

/** lease_paths's operations for one caller (an agent id, or `human` over MCP), paths from `cwd`. */
export function leaseOperations(layout: Layout, by: string, cwd: string): LeaseOperations {
  return {
    async take(a) {
      const { outcome, text } = await takeByName(layout, {
        by,
        cwd,
        paths: a.paths,
        why: a.why,
        ttlMs: a.ttlMs,
        wait: a.wait,
        signal: a.signal,
      });
      return { ok: outcome.ok, text };
    },
    release: (paths) => releaseByName(layout, by, cwd, paths),
    list: async () => formatLeases(await listLeases(layout)),
  };
}
