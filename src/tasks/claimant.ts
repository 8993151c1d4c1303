import { recordLiveness } from '../fleet/liveness.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { reopened, type Task } from './task.js';

/**
 * How a claimant has gone (a phrase for the reopen note), or null while it may still work
 * the task. A person's claim never lapses; an agent's lapses when its record has ended or
 * its process is gone (pid and start time, as crash detection sees it, §5.7).
 */
export function claimantGone(layout: Layout, claimant: string): string | null {
  if (claimant === 'human') return null;
  let rec;
  try {
    rec = readRecord(layout, claimant);
  } catch {
    // A damaged record is not proof of death: keep the claim; the reaper decides.
    return null;
  }
  if (!rec) return 'is no longer in the registry';
  const live = recordLiveness(rec);
  if (live === 'ended') return `ended (${rec.exitReason ?? rec.status})`;
  if (live === 'dead') return 'died (its process is gone)';
  return null;
}

/**
 * The task as the next writer will leave it (docs/design.md §15): a claim whose claimant is
 * gone reads open, with the note the reopening writes, so `task list`, `task show`, the
 * dashboard and the task tools tell the truth the moment a claimant dies, with nothing
 * written. `judged` keeps one verdict per claimant for one read.
 */
export function judgedClaim(layout: Layout, task: Task, judged: Map<string, string | null> = new Map()): Task {
  const claimant = task.claimed_by;
  if (task.status !== 'claimed' || !claimant) return task;
  let gone = judged.get(claimant);
  if (gone === undefined) judged.set(claimant, (gone = claimantGone(layout, claimant)));
  return gone ? reopened(task, claimant, `reopened: its claimant ${claimant} ${gone}`) : task;
}
