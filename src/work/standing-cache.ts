import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** An agent's commits ahead of and behind its base. */
export interface Counted {
  ahead: number;
  behind: number;
}

/**
 * The standing of in-place agents' tips not yet imported, kept between `status` refreshes:
 * counting one stages the agent's objects into a host folder (a link per object) and reads
 * through them, and the dashboard refreshes every few seconds until the task ends and its
 * commits are imported. A commit never changes, so the same agent, tip and base tip under the
 * same history identity (`historyIdentity`: grafts, replace refs, config) give the same counts.
 * Only tips the host's git read as commits are kept; an entry not used by the last count is
 * dropped. The cache is never the truth: deleting it costs one count.
 */
export function readStandings(file: string, history: string): Map<string, Counted> {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { v?: unknown; history?: unknown; counts?: unknown };
    if (parsed.v !== 1 || parsed.history !== history || typeof parsed.counts !== 'object' || !parsed.counts)
      return new Map();
    return new Map(
      Object.entries(parsed.counts as Record<string, Counted>).filter(
        ([, c]) => Number.isInteger(c?.ahead) && Number.isInteger(c?.behind),
      ),
    );
  } catch {
    return new Map();
  }
}

export function writeStandings(file: string, history: string, counts: ReadonlyMap<string, Counted>): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(tmp, JSON.stringify({ v: 1, history, counts: Object.fromEntries(counts) }));
    renameSync(tmp, file);
  } catch {
    // A cache that cannot be written costs the next refresh its staging.
  }
}

/** The entry of an agent's tip against its base's. */
export const standingKey = (id: string, tip: string, target: string): string => `${id} ${tip} ${target}`;
