import {
  auditMatcher,
  followAudit,
  formatAuditLine,
  mergeByTime,
  readAuditLines,
  type AuditFilter,
} from '../audit/read.js';
import { busFor, type BusConfig } from '../bus/open.js';
import { errorMessage } from '../errors.js';
import { selfHost } from '../hosts/self.js';
import type { Layout } from '../layout/layout.js';

type Line = Record<string, unknown>;

/** How often `--follow` asks the bus for other hosts' new lines. */
const FOLLOW_POLL_MS = 1_000;

/**
 * `flotilla audit` on a `nats://` bus (§9, §18): this host's lines from its own file (the
 * writer's copy, complete even while some are not shipped yet) and every other host's from
 * the fleet's audit stream, merged by time, each with its writing `host`. A bus that cannot be
 * reached gives this host's lines and one line on stderr saying the others are missing, exit 0:
 * partial data is still data (docs/decisions-hosts.md "The audit log on the bus").
 */
export async function fleetAudit(
  layout: Layout,
  config: BusConfig,
  filter: AuditFilter,
  opts: { host?: string; follow?: boolean; json?: boolean },
): Promise<void> {
  const self = selfHost(config.fleet);
  const bus = busFor(layout, config);
  // This host's own lines reach the bus while the others are read (a look is a process that holds a connection anyway).
  void bus.audit.ship();
  const mineWanted = !opts.host || opts.host === self;
  const othersWanted = opts.host !== self;
  const own = mineWanted ? readAuditLines(layout.auditFile, 0) : { lines: [], offset: 0 };
  const tag = (l: Line): Line => ({ ...l, host: self });
  let others: Line[] = [];
  let next = 0;
  let reached = true;
  if (othersWanted) {
    try {
      ({ lines: others, next } = await bus.audit.read(opts.host ? { host: opts.host } : {}));
    } catch (err) {
      reached = false;
      process.stderr.write(
        `flotilla: other hosts' audit lines could not be read: ${errorMessage(err)} — showing this host's (${self}) alone\n`,
      );
    }
  }
  const matches = auditMatcher(filter);
  const print = (line: Line) =>
    process.stdout.write((opts.json ? JSON.stringify(line) : formatAuditLine(line, { hosts: true })) + '\n');
  mergeByTime(own.lines.map(tag), others).filter(matches).forEach(print);
  if (!opts.follow) return;
  if (othersWanted) {
    // Other hosts' new lines, asked for each second; a bus away meanwhile is asked again.
    let polling = false;
    setInterval(() => {
      if (polling) return;
      polling = true;
      bus.audit
        .read({ ...(opts.host ? { host: opts.host } : {}), from: next })
        .then(
          (r) => {
            if (!reached) process.stderr.write("flotilla: the bus answers again: other hosts' lines follow\n");
            reached = true;
            next = r.next;
            r.lines.filter(matches).forEach(print);
          },
          () => undefined,
        )
        .finally(() => {
          polling = false;
        });
    }, FOLLOW_POLL_MS);
  }
  if (mineWanted) await followAudit(layout, { offset: own.offset, matches }, (l) => print(tag(l)));
  await new Promise<never>(() => undefined);
}
