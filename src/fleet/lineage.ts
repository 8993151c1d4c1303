import { readFileSync } from 'node:fs';
import { refusal, type FlotillaError } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { ancestors, processStartTime, selfPid } from './proc.js';
import { isTerminal } from './record-status.js';
import type { AgentRecord, AgentStatus } from './record.js';
import { ensureIndex } from './live.js';
import { liveIndexIds } from './registry-index.js';
import { readRecord } from './registry.js';
import { nodeIo } from './fleet-io.js';
import { shimHosts } from './shim-hosts.js';

/**
 * Who is the parent (§5.1). The caller's agent is the nearest process in its own ancestry
 * (itself included, so a harness spawning in-process is its own parent) that is a live,
 * registered harness: a non-terminal record whose pid and pid start time match. The
 * environment cannot make a process someone else's child: `FLOTILLA_AGENT_ID` is only a
 * hint, and a hint that names no ancestor is reported as forged.
 */
export interface Lineage {
  /** The caller's agent, or null when the caller is a person (a root spawn, depth 0). */
  parent: AgentRecord | null;
  /** Set when `FLOTILLA_AGENT_ID` names an agent that is not an ancestor of the caller. */
  forged?: string;
}

export interface FindParentOptions {
  /** The calling process; default this process's host pid (`selfPid`). */
  pid?: number;
  /** Where the `FLOTILLA_AGENT_ID` hint is read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

interface Candidate {
  id: string;
  pid: number;
  pidStartTime: string;
}

/**
 * The caller's pid chain, nearest first, walked (/proc, up to init) only when first asked for: a fleet with no
 * running agent and no hint needs none of it (`flotilla send` from a person's shell, §14). Start times read lazily
 * and once.
 */
class Chain {
  private walked: number[] | undefined;
  private readonly starts = new Map<number, string | null>();
  constructor(private readonly pid: number) {}
  get pids(): number[] {
    return (this.walked ??= [this.pid, ...ancestors(this.pid)]);
  }
  startTime(pid: number): string | null {
    if (!this.starts.has(pid)) this.starts.set(pid, processStartTime(pid));
    return this.starts.get(pid) ?? null;
  }
  /** Position of a harness in the chain, or -1: pid present and the same process (start time). */
  indexOf(c: { pid: number | null; pidStartTime: string | null }): number {
    if (c.pid === null || c.pidStartTime === null) return -1;
    const i = this.pids.indexOf(c.pid);
    return i >= 0 && this.startTime(c.pid) === c.pidStartTime ? i : -1;
  }
}

/**
 * Non-terminal records that name a pid, indexed by pid. Read with a bare JSON.parse: only
 * the matching record is later read in full (validated), which keeps a spawn cheap in a
 * large registry.
 */
function liveCandidatesByPid(layout: Layout): Map<number, Candidate[]> {
  const byPid = new Map<number, Candidate[]>();
  // The live index, not the registry: a spawn costs the same however many agents have finished.
  ensureIndex(layout);
  for (const id of liveIndexIds(layout, nodeIo)) {
    let raw: { pid?: unknown; pidStartTime?: unknown; status?: unknown };
    try {
      raw = JSON.parse(readFileSync(layout.registryFile(id), 'utf8')) as typeof raw;
    } catch {
      continue; // Vanished or corrupt: it cannot be a running parent.
    }
    if (typeof raw.pid !== 'number' || typeof raw.pidStartTime !== 'string') continue;
    if (typeof raw.status !== 'string' || isTerminal(raw.status as AgentStatus)) continue;
    const list = byPid.get(raw.pid) ?? [];
    list.push({ id, pid: raw.pid, pidStartTime: raw.pidStartTime });
    byPid.set(raw.pid, list);
  }
  return byPid;
}

export function findParentAgent(layout: Layout, opts: FindParentOptions = {}): Lineage {
  const chain = new Chain(opts.pid ?? selfPid());
  const hint = (opts.env ?? process.env).FLOTILLA_AGENT_ID?.trim();

  // The hint costs one file read and, when it names an ancestor, bounds the walk below.
  let hintAt = -1;
  let hinted: AgentRecord | undefined;
  if (hint) {
    try {
      hinted = readRecord(layout, hint);
    } catch {
      hinted = undefined;
    }
    hintAt = hinted ? chain.indexOf(hinted) : -1;
  }
  if (hint && hintAt < 0) {
    // A door's command or a hook the shim host runs for a vendor agent: the host's word names the agent.
    const hosted = hostedCaller(layout, chain, hinted);
    if (hosted?.parent) return hosted;
  }
  const forged = hint && hintAt < 0 ? { forged: hint } : {};

  // The nearest registered harness wins, even over a farther hinted one: otherwise an agent
  // at the depth limit could name its root and spawn below it. Past the hint's position
  // nothing nearer can exist, so the walk stops there (unless the hinted agent has ended).
  // A forged hint still walks the whole chain: the caller's real agent is reported with it,
  // so a refusal can name it and `approve` can refuse an agent that lies about its name.
  const byPid = liveCandidatesByPid(layout);
  // No running agent: nobody's process can be an ancestor, and the chain is never walked.
  if (byPid.size === 0) return { parent: null, ...forged };
  const end = hintAt >= 0 && hinted && !isTerminal(hinted.status) ? hintAt + 1 : chain.pids.length;
  for (let i = 0; i < end; i++) {
    for (const c of byPid.get(chain.pids[i]!) ?? []) {
      if (chain.indexOf(c) !== i) continue;
      // Re-read in full: the record may have ended since the scan.
      const rec = readRecord(layout, c.id);
      if (rec && !isTerminal(rec.status) && chain.indexOf(rec) === i) return { parent: rec, ...forged };
    }
  }
  // The shim host's child that names no live agent is no one's: never a person's.
  if (!hint && hostedCaller(layout, chain, undefined)) return { parent: null, forged: 'shim-host' };
  return { parent: null, ...forged };
}

/**
 * The caller as the shim host (shim-host/server.ts) made it: a process that descends from the host, which runs every
 * spawned vendor agent's shim and starts their doors' commands and their hooks with the agent's `FLOTILLA_AGENT_ID`
 * (nothing an agent's own process can descend from: its CLI is its pane process's child). Only a live agent's id
 * counts; a host's child naming none is no one's, not a person's. Each running host keeps its pid among the doors.
 */
function hostedCaller(layout: Layout, chain: Chain, hinted: AgentRecord | undefined): Lineage | undefined {
  if (!shimHosts(layout).some((h) => chain.indexOf({ pid: h.pid, pidStartTime: h.start }) >= 0)) return undefined;
  return { parent: hinted && !isTerminal(hinted.status) ? hinted : null };
}

/** The refusal for a forged `FLOTILLA_AGENT_ID` (§5.1). */
export function forgedParentRefusal(id: string): FlotillaError {
  return refusal(
    'forged-parent',
    `spawn refused: FLOTILLA_AGENT_ID names '${id}', which is not an ancestor of this process — unset it (env -u FLOTILLA_AGENT_ID) or spawn from that agent's own shell`,
    { id },
  );
}

/** The depth a child of `parent` gets: 0 for a root. */
export function childDepth(parent: Pick<AgentRecord, 'depth'> | null): number {
  return parent ? parent.depth + 1 : 0;
}

/** Whether `target` descends from `ancestorId`, parents followed through the fleet's records. */
export function isBelow(layout: Layout, target: AgentRecord, ancestorId: string): boolean {
  const seen = new Set<string>();
  for (let p = target.parentId; p !== null && !seen.has(p); p = readRecord(layout, p)?.parentId ?? null) {
    if (p === ancestorId) return true;
    seen.add(p);
  }
  return false;
}
