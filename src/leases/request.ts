import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import type { Lease } from './lease.js';
import { releaseLeases, takeLeases, type TakeOutcome, type TakeSpec } from './leases.js';
import { conflictMessage } from './view.js';
import { takeWhenFree } from './wait.js';

/**
 * An explicit lease asked for by name (docs/design.md §16): `flotilla lease take|release`,
 * the `lease_paths` tool and the same over `flotilla mcp` all come here, with the caller's
 * identity found by the door it came through. Paths are relative to the caller's folder.
 */

/** `90s`, `30m`, `2h`, `1d`, or seconds → ms. */
export function parseTtl(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$/.exec(text);
  if (!m || !(Number(m[1]) > 0))
    throw new UsageError(`--ttl must be a duration like 90s, 30m, 2h or 1d, got '${text}'`);
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  return Math.round(Number(m[1]) * unit);
}

export interface LeaseAsk {
  by: string;
  cwd: string;
  paths: string[];
  why?: string | undefined;
  ttlMs?: number | null | undefined;
  wait?: boolean | undefined;
  /** Give up waiting after this long (the lease is then not taken). */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Told once when the caller is put in line. */
  onQueued?: (text: string) => void;
}

/** The caller's task now: its leases without a ttl end with it. A person has none. */
export function taskOf(layout: Layout, by: string): number | null {
  return by === 'human' ? null : (readRecord(layout, by)?.task ?? null);
}

/** What a take by name asks for: the paths resolved in the caller's folder, held for its task unless a ttl is given. */
export function askedSpec(layout: Layout, ask: LeaseAsk): TakeSpec {
  return {
    targets: ask.paths.map((p) => resolve(ask.cwd, p)),
    holder: ask.by,
    why: ask.why?.trim() || 'explicit lease',
    ttlMs: ask.ttlMs ?? null,
    task: taskOf(layout, ask.by),
  };
}

/** The line a take by name prints: what was leased and until when, or the conflict that refused it. */
export function takenText(ask: LeaseAsk, spec: TakeSpec, outcome: TakeOutcome): string {
  if (!outcome.ok) {
    const conflict = conflictMessage(outcome.conflict, 'nothing was leased');
    return ask.wait ? `gave up waiting: ${conflict}` : conflict;
  }
  const until =
    spec.ttlMs === null
      ? ask.by === 'human'
        ? 'until you release it'
        : 'until your task ends'
      : `until ${outcome.taken[0]?.lease.expires_at ?? '?'}`;
  return `leased to ${ask.by} ${until}: ${outcome.taken.map((t) => t.lease.path).join(', ')}`;
}

/** The line a release by name prints. */
export function releasedText(released: readonly { lease: Lease }[]): string {
  return released.length === 0 ? 'no leases to release' : `released: ${released.map((r) => r.lease.path).join(', ')}`;
}

export async function takeByName(layout: Layout, ask: LeaseAsk): Promise<{ outcome: TakeOutcome; text: string }> {
  const spec = askedSpec(layout, ask);
  const outcome = ask.wait
    ? await takeWhenFree(layout, spec, {
        ...(ask.signal ? { signal: ask.signal } : {}),
        ...(ask.timeoutMs !== undefined ? { timeoutMs: ask.timeoutMs } : {}),
        onQueued: (o) => {
          if (!o.ok)
            ask.onQueued?.(`waiting: ${o.conflict.path} is held by ${o.conflict.lease.holder}; you are in line for it`);
        },
      })
    : await takeLeases(layout, spec);
  return { outcome, text: takenText(ask, spec, outcome) };
}

export async function releaseByName(
  layout: Layout,
  by: string,
  cwd: string,
  paths: string[] | undefined,
): Promise<string> {
  const released = await releaseLeases(
    layout,
    by,
    paths?.map((p) => resolve(cwd, p)),
    `released by ${by}`,
  );
  return releasedText(released);
}
