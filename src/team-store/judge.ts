import { fleetBus } from '../bus/settings.js';
import type { HostBeat } from '../bus/types.js';
import { isTerminal } from '../fleet/record-status.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { claimantGone } from '../tasks/claimant.js';

/**
 * How a claimant or lease holder anywhere in the fleet has gone, or null while it may still
 * work (docs/design.md §15, §16, §18). One verdict per id for one read or write. An agent of
 * this host is judged as on one machine (tasks/claimant.ts: its record, its pid and start
 * time); an agent of another host by what the fleet knows of it on the bus — its record ended
 * (or marked lost), or its host silent past its `lost_after_secs` (§17.8), the same judgement
 * that marks the host's agents lost. So a lost host's claims and leases are free as soon as
 * the host counts as lost, before anyone has marked its agents.
 */
export interface FleetJudge {
  gone(who: string, since?: string | null): Promise<string | null>;
}

/** A claim by an id no host knows is kept this long (a spawn's record reaches the bus after its harness starts). */
const UNKNOWN_GRACE_MS = 60_000;

export function fleetJudge(layout: Layout): FleetJudge {
  const verdicts = new Map<string, Promise<string | null>>();
  let beats: Promise<HostBeat[]> | undefined;
  const judge = async (who: string, since: string | null | undefined): Promise<string | null> => {
    if (who === 'human') return null;
    let local;
    try {
      local = readRecord(layout, who);
    } catch {
      // A damaged record is not proof of death.
      return null;
    }
    if (local) return claimantGone(layout, who);
    const bus = await fleetBus(layout);
    const rec = await bus.records.get(who);
    if (!rec) {
      const age = since ? Date.now() - Date.parse(since) : Infinity;
      return age > UNKNOWN_GRACE_MS ? "is in no host's registry" : null;
    }
    if (isTerminal(rec.status)) return `ended (${rec.exitReason ?? rec.status})`;
    if (!rec.host) return null;
    beats ??= bus.records.hosts();
    const beat = (await beats).find((b) => b.host === rec.host);
    if (beat?.lost) return `is on host ${rec.host}, silent for ${Math.round((beat.ageMs ?? 0) / 1000)} s (lost)`;
    return null;
  };
  return {
    gone(who, since) {
      let v = verdicts.get(who);
      if (!v) verdicts.set(who, (v = judge(who, since)));
      return v;
    },
  };
}
