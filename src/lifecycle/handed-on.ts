import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { completionKey } from './completion.js';

/**
 * A result a person's command has handed on (`flotilla wait`, `spawn-agent --wait`,
 * `flotilla collect` printed it) is read: its completion in the human inbox is claimed, as
 * wait_for_agents claims it from a parent agent's (docs/decisions.md "Handed on is read").
 * Left in new/, such completions piled up as unread mail for things the person had seen.
 *
 * The marker is written before the claim is tried, and a completion delivered later checks
 * it after its delivery (`claimIfHandedOn`), so one of the two always finds the other.
 */
function marker(layout: Layout, agentId: string, task: number): string {
  return layout.marker(`${agentId}.task-${task}.handed-on`);
}

/** Marks each task's answer handed on to the person and claims its completion if it is there. */
export async function markHandedOn(
  layout: Layout,
  tasks: readonly { id: string; task: number | null | undefined }[],
): Promise<void> {
  for (const t of tasks) {
    if (!t.task) continue;
    const m = marker(layout, t.id, t.task);
    try {
      mkdirSync(dirname(m), { recursive: true });
      writeFileSync(m, '');
    } catch {
      continue; // The mail stays unread: nothing is lost.
    }
    await claimCompletion(layout, t.id, t.task);
  }
}

/** After a completion to `human` was delivered: claimed at once when its answer was already handed on. */
export async function claimIfHandedOn(layout: Layout, agentId: string, task: number): Promise<void> {
  if (existsSync(marker(layout, agentId, task))) await claimCompletion(layout, agentId, task);
}

async function claimCompletion(layout: Layout, agentId: string, task: number): Promise<void> {
  const key = completionKey(agentId, task);
  let names: string[];
  try {
    names = readdirSync(join(layout.inbox('human'), 'new'));
  } catch {
    return;
  }
  const { claim } = await import('../inbox/claim.js');
  // The completion's name carries its key (lifecycle/completion.ts): `<ms>.<time><key>.<n>.<host>.md`.
  for (const name of names.filter((n) => n.split('.')[1]?.endsWith(key))) {
    try {
      await claim(layout, 'human', name);
    } catch {
      /* left unread */
    }
  }
}
