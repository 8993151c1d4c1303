import { readFileSync, rmSync } from 'node:fs';
import { writeFileAtomic } from '../layout/atomic.js';
import type { Layout } from '../layout/layout.js';
import { ancestors, processGroup, processStartTime, selfPid } from '../fleet/proc.js';
import { isTerminal } from '../fleet/record.js';
import { listRecords } from '../fleet/registry.js';
import { signalGroup } from '../tools/process-group.js';

/**
 * The process groups of an agent's running tool calls, kept in `state/markers/<id>.groups`
 * so that when the harness dies without cleaning up (SIGKILL) the reaper can kill what it
 * left running: shell commands run detached in their own groups and would live on as orphans.
 */
export interface GroupTracker {
  started(pgid: number): void;
  ended(pgid: number): void;
}

interface Entry {
  pgid: number;
  start: string | null;
}

function file(layout: Layout, id: string): string {
  return layout.marker(`${id}.groups`);
}

function read(layout: Layout, id: string): Entry[] {
  try {
    return JSON.parse(readFileSync(file(layout, id), 'utf8')) as Entry[];
  } catch {
    return [];
  }
}

export function trackToolGroups(layout: Layout, id: string): GroupTracker {
  const live = new Map<number, Entry>();
  const save = () => {
    try {
      writeFileAtomic(file(layout, id), JSON.stringify([...live.values()]));
    } catch {
      // Best effort: the reaper then only misses what it could not read.
    }
  };
  return {
    started(pgid) {
      live.set(pgid, { pgid, start: processStartTime(pgid) });
      save();
    },
    ended(pgid) {
      live.delete(pgid);
      save();
    },
  };
}

/**
 * Kills the tool process groups an ended agent left running (start time checked against pid
 * reuse): each is a command's pid namespace, so everything a command left behind, detached or
 * not, ends with its agent (docs/security.md, Lineage). A namespace that holds a live
 * background child agent (`spawn-agent --background` from the shell) is left alone: §5.8
 * keeps background children running when their parent ends.
 */
export function killLeftoverGroups(layout: Layout, id: string): number[] {
  const killed: number[] = [];
  const hosts = backgroundChildPids(layout, id);
  for (const e of read(layout, id)) {
    if (e.start === null || processStartTime(e.pgid) !== e.start) continue;
    if (hosts.some((pid) => ancestors(pid).includes(e.pgid))) continue;
    if (signalGroup(e.pgid, 'SIGKILL')) killed.push(e.pgid);
  }
  rmSync(file(layout, id), { force: true });
  return killed;
}

/**
 * Whether the agent's harness started `pid`: a descendant of the harness, or a process in (or
 * under) one of the tool process groups the harness recorded and still live (start time
 * checked against pid reuse) — a server that detached from its command stays in the group.
 * Only such a process may be signalled when a secret grant ends (docs/security-trust.md "Secrets",
 * step 5); anything else holding the value is the person's or another agent's.
 */
export function startedByHarness(layout: Layout, id: string, pid: number, harnessPid = selfPid()): boolean {
  if (pid === harnessPid) return false;
  const up = ancestors(pid);
  if (up.includes(harnessPid)) return true;
  const group = processGroup(pid);
  return read(layout, id).some(
    (e) =>
      e.start !== null &&
      processStartTime(e.pgid) === e.start &&
      (e.pgid === group || e.pgid === pid || up.includes(e.pgid)),
  );
}

function backgroundChildPids(layout: Layout, id: string): number[] {
  return listRecords(layout)
    .filter((r) => r.parentId === id && r.background && !isTerminal(r.status) && r.pid !== null)
    .map((r) => r.pid!);
}
