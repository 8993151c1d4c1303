import { readFileSync, rmSync } from 'node:fs';
import { writeFileAtomic } from '../layout/atomic.js';
import type { Layout } from '../layout/layout.js';
import { processStartTime } from '../fleet/proc.js';
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
    started(pgid) { live.set(pgid, { pgid, start: processStartTime(pgid) }); save(); },
    ended(pgid) { live.delete(pgid); save(); },
  };
}

/** Kills the tool process groups a dead agent left running (start time checked against pid reuse). */
export function killLeftoverGroups(layout: Layout, id: string): number[] {
  const killed: number[] = [];
  for (const e of read(layout, id)) {
    if (e.start === null || processStartTime(e.pgid) !== e.start) continue;
    if (signalGroup(e.pgid, 'SIGKILL')) killed.push(e.pgid);
  }
  rmSync(file(layout, id), { force: true });
  return killed;
}
