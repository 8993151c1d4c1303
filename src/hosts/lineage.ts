import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from '../config/schema.js';
import { FlotillaError, isErrno } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import { parseAgentRecord } from '../fleet/record-validate.generated.js';
import { writeFileAtomic } from '../layout/atomic.js';
import type { Layout } from '../layout/layout.js';

/**
 * A child's lineage carried to another host (docs/design.md §17.5): the parent's record as
 * its own host's registry holds it, that host's name, and the tree's limits there. The
 * spawning side builds it from the record its process ancestry proved (never from anything
 * the agent typed), and the other host accepts it only from a caller with no agent among its
 * ancestors — the person's ssh login (docs/security-trust.md "Hosts").
 */
export interface RemoteLineage {
  v: 1;
  /** The host the parent runs on, as the spawning side calls itself. */
  host: string;
  parent: AgentRecord;
  /** The tree's limits where it was rooted: the other host applies the stricter of these and its own. */
  limits: Pick<Config['limits'], 'max_depth' | 'max_children' | 'max_spawns_per_tree'>;
}

/**
 * A host's name (config/hosts-schema.ts HOST_NAME, with a machine's own name's length); not imported: that file loads
 * zod.
 */
const HOST_NAME = /^[a-z0-9_-]{1,64}$/;

/** The `--lineage` value for a child of `parent`, spawned from host `host`. */
export function encodeLineage(host: string, parent: AgentRecord, limits: Config['limits']): string {
  const l: RemoteLineage = {
    v: 1,
    host,
    parent,
    limits: {
      max_depth: limits.max_depth,
      max_children: limits.max_children,
      max_spawns_per_tree: limits.max_spawns_per_tree,
    },
  };
  return JSON.stringify(l);
}

/** Parses and checks a `--lineage` value; a malformed one is a usage error, never a root spawn. */
export function decodeLineage(text: string): RemoteLineage {
  const bad = (why: string) =>
    new FlotillaError(
      `spawn refused: --lineage is ${why} — it is written by another host's Flotilla over ssh, never by hand`,
      { code: 'bad-lineage', exitCode: 2 },
    );
  let raw: Partial<RemoteLineage> & { parent?: unknown; limits?: unknown };
  try {
    raw = JSON.parse(text) as typeof raw;
  } catch {
    throw bad('not JSON');
  }
  if (raw?.v !== 1 || typeof raw.host !== 'string' || !HOST_NAME.test(raw.host))
    throw bad('not a lineage of this version');
  const parent = parseAgentRecord(raw.parent);
  if (!parent.success) throw bad("missing the parent's record");
  const l = raw.limits as Record<string, unknown> | undefined;
  const whole = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;
  if (!l || !whole(l.max_depth) || !whole(l.max_children) || !whole(l.max_spawns_per_tree))
    throw bad("missing the tree's limits");
  return { v: 1, host: raw.host, parent: parent.data, limits: raw.limits as RemoteLineage['limits'] };
}

/** This host's limits, tightened by the tree's own where it was rooted. */
export function treeLimits(limits: Config['limits'], lineage: RemoteLineage): Config['limits'] {
  return {
    ...limits,
    max_depth: Math.min(limits.max_depth, lineage.limits.max_depth),
    max_children: Math.min(limits.max_children, lineage.limits.max_children),
    max_spawns_per_tree: Math.min(limits.max_spawns_per_tree, lineage.limits.max_spawns_per_tree),
  };
}

/**
 * Where a child keeps its remote parent's lineage (`state/lineage/<id>.json`): its harness
 * admits itself against it (§5.6) and its completion is addressed by it, since the parent's
 * record lives in another host's registry.
 */
function lineageFile(layout: Layout, childId: string): string {
  return join(layout.state, 'lineage', `${childId}.json`);
}

export function keepLineage(layout: Layout, childId: string, lineage: RemoteLineage): void {
  const file = lineageFile(layout, childId);
  mkdirSync(dirname(file), { recursive: true });
  writeFileAtomic(file, JSON.stringify(lineage) + '\n');
}

/** The remote parent's lineage of `childId`, or undefined when its parent is on this host (or it is a root). */
export function remoteLineage(layout: Layout, childId: string): RemoteLineage | undefined {
  let text: string;
  try {
    text = readFileSync(lineageFile(layout, childId), 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return undefined;
    throw err;
  }
  return decodeLineage(text);
}
