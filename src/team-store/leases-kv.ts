import { audit } from '../audit/audit.js';
import { casBackoff, type SharedKv } from '../bus/shared.js';
import type { Config } from '../config/schema.js';
import { FlotillaError, UsageError } from '../errors.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { checkoutPath } from '../leases/checkout.js';
import { leaseLapsed } from '../leases/lapse.js';
import { emptyLeaseFile, parseLeaseFile, type Lease, type LeaseFile } from '../leases/lease.js';
import { resolveTarget, type TakeOutcome, type TakeSpec } from '../leases/leases.js';
import type { LeaseView } from '../leases/list.js';
import {
  conflictIn,
  covers,
  placeLease,
  releasedEvent,
  releaseIn,
  takenEvent,
  type LeaseAsked,
} from '../leases/decide.js';
import { pathsOverlap } from '../leases/match.js';
import { fleetJudge, type FleetJudge } from './judge.js';
import { repoIdentity } from './repo-id.js';

/**
 * The fleet's leases on the bus (docs/design.md §16, §18; docs/decisions-hosts.md "One board and one
 * set of leases on the bus"): one key per repository, `repo.<identity>` (repo-id.ts), holding
 * that repository's leases as one checkout's lease file does, with paths relative to its top
 * folder. Clones of one repository on two hosts share the key, so a lease taken in one holds
 * in the other. The unit of compare-and-set is the repository, not the path: a lease on a
 * folder or a glob overlaps paths no single key names, so a take reads every lease of the
 * repository and writes them back only if nobody wrote meanwhile.
 */

const MAX_TRIES = 50;
const repoKey = (id: string): string => `repo.${id}`;

interface Read {
  file: LeaseFile;
  revision: number | null;
}

async function readRepo(kv: SharedKv, id: string): Promise<Read> {
  const e = await kv.get(repoKey(id));
  return {
    file: (e && parseLeaseFile(e.value)) ?? emptyLeaseFile(`repository ${id.slice(0, 12)}`),
    revision: e?.revision ?? null,
  };
}

async function writeRepo(kv: SharedKv, id: string, read: Read): Promise<boolean> {
  const text = JSON.stringify(read.file);
  return (
    (read.revision === null
      ? await kv.create(repoKey(id), text)
      : await kv.update(repoKey(id), text, read.revision)) !== null
  );
}

/**
 * Why a lease no longer holds: this host's holder as on one machine (leases/lapse.ts); another host's by the fleet
 * judge.
 */
async function lapsed(
  layout: Layout,
  judge: FleetJudge,
  lease: Lease,
  now: number,
): Promise<{ event: 'lease_expired' | 'lease_released'; reason: string } | null> {
  let local;
  try {
    local = lease.holder === 'human' ? undefined : readRecord(layout, lease.holder);
  } catch {
    return null;
  }
  if (local || lease.holder === 'human') return leaseLapsed(layout, lease, now);
  if (lease.expires_at !== null && Date.parse(lease.expires_at) <= now)
    return { event: 'lease_expired', reason: `its ttl ran out at ${lease.expires_at}` };
  const gone = await judge.gone(lease.holder, lease.taken_at);
  return gone ? { event: 'lease_released', reason: `its holder ${gone}` } : null;
}

/** Drops what has lapsed (audited); true if anything went. */
async function sweep(layout: Layout, judge: FleetJudge, file: LeaseFile, now: number): Promise<boolean> {
  const keep: Lease[] = [];
  for (const l of file.leases) {
    const why = await lapsed(layout, judge, l, now);
    if (!why) keep.push(l);
    else
      audit(layout, { event: why.event, agent: l.holder, path: l.path, checkout: file.checkout, reason: why.reason });
  }
  const changed = keep.length !== file.leases.length;
  file.leases = keep;
  return changed;
}

/** The repository and relative paths of each target, by repository. */
function byRepo(targets: string[], fleet: Config['fleet']): Map<string, { checkout: string; rels: string[] }> {
  const out = new Map<string, { checkout: string; rels: string[] }>();
  for (const t of targets) {
    const { checkout, rel } = resolveTarget(t);
    const id = repoIdentity(checkout, fleet);
    const group = out.get(id) ?? { checkout, rels: [] };
    group.rels.push(rel);
    out.set(id, group);
  }
  return out;
}

function put(
  layout: Layout,
  file: LeaseFile,
  l: LeaseAsked,
  now: number,
  via: string,
): { lease: Lease; fresh: boolean } {
  const placed = placeLease(file, l, now);
  audit(layout, takenEvent(file, placed.lease, via));
  return placed;
}

/**
 * Takes leases on every target, all or none (leases/leases.ts `takeLeases`), repository by
 * repository in identity order; a conflict in a later one gives back what this take added in
 * the earlier ones.
 */
export async function takeLeasesKv(
  layout: Layout,
  kv: SharedKv,
  fleet: Config['fleet'],
  spec: TakeSpec,
  via = 'lease',
): Promise<TakeOutcome> {
  if (spec.targets.length === 0)
    throw new UsageError('name at least one path or glob to lease, e.g. flotilla lease take src/parser.ts');
  const groups = byRepo(spec.targets, fleet);
  const judge = fleetJudge(layout);
  const taken: { checkout: string; lease: Lease }[] = [];
  const added: { id: string; paths: string[] }[] = [];
  for (const id of [...groups.keys()].sort()) {
    const rels = groups.get(id)!.rels;
    let done = false;
    for (let tries = 0; tries < MAX_TRIES && !done; tries++) {
      await casBackoff(tries);
      const read = await readRepo(kv, id);
      const now = Date.now();
      const swept = await sweep(layout, judge, read.file, now);
      const conflict = rels
        .map((rel) => ({
          rel,
          held: conflictIn(read.file, rel, spec.holder),
        }))
        .find((c) => c.held);
      if (conflict?.held) {
        audit(layout, {
          event: 'lease_refused',
          agent: spec.holder,
          path: conflict.rel,
          checkout: read.file.checkout,
          holder: conflict.held.holder,
          held_path: conflict.held.path,
          via,
        });
        if (swept) await writeRepo(kv, id, read);
        await giveBack(layout, kv, spec.holder, added);
        return {
          ok: false,
          conflict: { checkout: read.file.checkout, path: conflict.rel, lease: conflict.held },
          queued: false,
        };
      }
      const mine = rels.map((rel) => put(layout, read.file, { path: rel, ...spec }, now, via));
      if (!(await writeRepo(kv, id, read))) continue;
      taken.push(...mine.map((m) => ({ checkout: read.file.checkout, lease: m.lease })));
      added.push({ id, paths: mine.filter((m) => m.fresh).map((m) => m.lease.path) });
      done = true;
    }
    if (!done)
      throw new FlotillaError(
        `the leases of repository ${id.slice(0, 12)} kept changing under ${MAX_TRIES} tries — try again`,
        { code: 'lease-busy' },
      );
  }
  return { ok: true, taken };
}

/** A take that met a conflict in a later repository gives back what it added in the earlier ones. */
async function giveBack(
  layout: Layout,
  kv: SharedKv,
  holder: string,
  added: { id: string; paths: string[] }[],
): Promise<void> {
  for (const { id, paths } of added) {
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      await casBackoff(tries);
      const read = await readRepo(kv, id);
      read.file.leases = read.file.leases.filter((l) => !(l.holder === holder && paths.includes(l.path)));
      if (await writeRepo(kv, id, read)) break;
    }
  }
}

/**
 * The lease an edit needs (leases/leases.ts `leaseForEdit`): one read when the holder's own lease already covers the
 * file.
 */
export async function leaseForEditKv(
  layout: Layout,
  kv: SharedKv,
  fleet: Config['fleet'],
  file: string,
  holder: string,
  task: number | null,
  via: string,
): Promise<TakeOutcome> {
  const { checkout, rel } = checkoutPath(file);
  const { file: current } = await readRepo(kv, repoIdentity(checkout, fleet));
  const mine = current.leases.find((l) => l.holder === holder && covers(l.path, rel));
  const now = Date.now();
  if (
    mine &&
    !current.leases.some((l) => l.holder !== holder && pathsOverlap(l.path, rel)) &&
    !(await lapsed(layout, fleetJudge(layout), mine, now))
  ) {
    return { ok: true, taken: [{ checkout: current.checkout, lease: mine }] };
  }
  return takeLeasesKv(layout, kv, fleet, { targets: [file], holder, why: `${via} ${rel}`, ttlMs: null, task }, via);
}

/** Gives leases back (leases/leases.ts `releaseLeases`); `targets` undefined: all of the caller's. */
export async function releaseLeasesKv(
  layout: Layout,
  kv: SharedKv,
  fleet: Config['fleet'],
  by: string,
  targets: string[] | undefined,
  reason: string,
): Promise<{ checkout: string; lease: Lease }[]> {
  if (targets === undefined) return releaseAllOfKv(layout, kv, by, reason);
  const groups = byRepo(targets, fleet);
  const out: { checkout: string; lease: Lease }[] = [];
  for (const id of [...groups.keys()].sort()) {
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      await casBackoff(tries);
      const read = await readRepo(kv, id);
      await sweep(layout, fleetJudge(layout), read.file, Date.now());
      const gone = groups.get(id)!.rels.flatMap((rel) => releaseIn(read.file, rel, by));
      if (!(await writeRepo(kv, id, read))) continue;
      for (const l of gone) {
        audit(layout, releasedEvent(read.file, l, by, reason));
        out.push({ checkout: read.file.checkout, lease: l });
      }
      break;
    }
  }
  return out;
}

async function eachRepo(kv: SharedKv): Promise<{ id: string; file: LeaseFile }[]> {
  const all = await kv.values('repo.*');
  return all
    .map((v) => ({ id: v.key.slice('repo.'.length), file: parseLeaseFile(v.value) }))
    .filter((r): r is { id: string; file: LeaseFile } => r.file !== null);
}

/** Every lease of one holder goes, in every repository: called when the holder ends. */
export async function releaseAllOfKv(
  layout: Layout,
  kv: SharedKv,
  holder: string,
  reason: string,
): Promise<{ checkout: string; lease: Lease }[]> {
  return dropWhere(
    layout,
    kv,
    (l) => l.holder === holder,
    async (file, l) => {
      audit(layout, releasedEvent(file, l, holder, reason));
    },
  );
}

/** Drops `holder`'s leases that have lapsed (its task ended): called at each task's end. */
export async function sweepHolderKv(layout: Layout, kv: SharedKv, holder: string): Promise<void> {
  const judge = fleetJudge(layout);
  const now = Date.now();
  const verdicts = new Map<Lease, Awaited<ReturnType<typeof lapsed>>>();
  const why = async (l: Lease) => {
    if (!verdicts.has(l)) verdicts.set(l, await lapsed(layout, judge, l, now));
    return verdicts.get(l) ?? null;
  };
  const mine = (await eachRepo(kv)).filter((r) => r.file.leases.some((l) => l.holder === holder));
  for (const { id } of mine) {
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      await casBackoff(tries);
      const read = await readRepo(kv, id);
      const gone: { lease: Lease; event: 'lease_expired' | 'lease_released'; reason: string }[] = [];
      for (const l of read.file.leases) {
        if (l.holder !== holder) continue;
        const v = await why(l);
        if (v) gone.push({ lease: l, ...v });
      }
      if (gone.length === 0) break;
      read.file.leases = read.file.leases.filter((l) => !gone.some((g) => g.lease === l));
      if (!(await writeRepo(kv, id, read))) continue;
      for (const g of gone)
        audit(layout, {
          event: g.event,
          agent: holder,
          path: g.lease.path,
          checkout: read.file.checkout,
          reason: g.reason,
        });
      break;
    }
  }
}

async function dropWhere(
  layout: Layout,
  kv: SharedKv,
  drop: (l: Lease) => boolean,
  told: (file: LeaseFile, l: Lease) => Promise<void>,
): Promise<{ checkout: string; lease: Lease }[]> {
  const out: { checkout: string; lease: Lease }[] = [];
  for (const { id } of (await eachRepo(kv)).filter((r) => r.file.leases.some(drop))) {
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      await casBackoff(tries);
      const read = await readRepo(kv, id);
      const gone = read.file.leases.filter(drop);
      if (gone.length === 0) break;
      read.file.leases = read.file.leases.filter((l) => !drop(l));
      if (!(await writeRepo(kv, id, read))) continue;
      for (const l of gone) {
        await told(read.file, l);
        out.push({ checkout: read.file.checkout, lease: l });
      }
      break;
    }
  }
  return out;
}

/** The leases of the repository of `checkout` that hold now, nothing written (`lease check --staged`). */
export async function repoLeasesKv(
  layout: Layout,
  kv: SharedKv,
  fleet: Config['fleet'],
  checkout: string,
): Promise<Lease[]> {
  const judge = fleetJudge(layout);
  const now = Date.now();
  const { file } = await readRepo(kv, repoIdentity(checkout, fleet));
  const out: Lease[] = [];
  for (const l of file.leases) if (!(await lapsed(layout, judge, l, now))) out.push(l);
  return out;
}

/** `lease list` on the bus: every repository's leases that hold now, nothing written. */
export async function listLeasesKv(layout: Layout, kv: SharedKv): Promise<LeaseView[]> {
  const judge = fleetJudge(layout);
  const now = Date.now();
  const out: LeaseView[] = [];
  for (const { file } of await eachRepo(kv)) {
    const leases: Lease[] = [];
    for (const l of file.leases) if (!(await lapsed(layout, judge, l, now))) leases.push(l);
    if (leases.length > 0) out.push({ checkout: file.checkout, leases, waiting: [] });
  }
  return out;
}
