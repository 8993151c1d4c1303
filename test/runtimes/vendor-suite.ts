import { readFileSync } from 'node:fs';
import { afterEach } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { listRecords } from '../../src/fleet/registry.js';
import { vendorFleet, type VendorFleet } from './helpers.js';
import { TARGETS } from './targets.js';

/** A definition's permissions for an agent nobody is asked about: the vendor tests' usual set-up. */
export const DONT_ASK = 'permissions:\n  permission_mode: dont_ask\n';

/** Every vendor CLI the runtime tests drive, by name (`it.each(RUNTIMES)`). */
export const RUNTIMES = Object.keys(TARGETS) as (keyof typeof TARGETS)[];

/** What `vendorFleet` takes. */
export type VendorFleetOptions = Parameters<typeof vendorFleet>[0];

/**
 * The vendor fleets of a test file or suite, called where the file's `afterEach` would be:
 * `open` starts one; after each test every fleet it opened is explained if the test failed and
 * disposed, then `after` runs (a server of the test's own, a variable it set).
 */
export function vendorFleets(after?: () => unknown): { open(o: VendorFleetOptions): Promise<VendorFleet> } {
  const opened: VendorFleet[] = [];
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') {
      // In the failure's own message: a CI log keeps the summary at its end, not what ran before it.
      const why = (await Promise.all(opened.map(explain))).join('\n');
      for (const e of ctx.task.result.errors ?? []) e.message += `\n${why}`;
    }
    for (const f of opened.splice(0)) await f.dispose();
    await after?.();
  });
  return {
    async open(o) {
      const f = await vendorFleet(o);
      opened.push(f);
      return f;
    },
  };
}

/** What a failing test is told: each agent's screen and log, and what the model was asked. */
export async function explain(f: VendorFleet): Promise<string> {
  const parts: string[] = [];
  for (const r of listRecords(f.layout)) {
    if (r.id === 'lead-parent') continue;
    const screen = r.tmux ? await f.tmux.capture(r.tmux.paneId).catch(() => '(pane gone)') : '(no pane)';
    let log = '';
    try {
      log = readFileSync(f.layout.log(r.id), 'utf8').slice(-2000);
    } catch {
      /* none */
    }
    parts.push(
      `--- ${r.id} (${r.status}, ${r.exitReason ?? ''}) pane:\n${screen
        .split('\n')
        .filter((l) => l.trim())
        .slice(-40)
        .join('\n')}\n--- log:\n${log}`,
    );
  }
  const audit = readAudit(f.layout, {}).lines.slice(-15);
  parts.push(
    `--- the last audit lines:\n${audit.map((l) => JSON.stringify(l)).join('\n')}`,
    `--- ${f.vendor.prompts.length} scripted model calls; tools offered: ${JSON.stringify(f.vendor.tools.at(-1) ?? [])}`,
    `--- what the model saw:\n${f.vendor.seen().slice(-3000)}`,
  );
  return parts.join('\n');
}
