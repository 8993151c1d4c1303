import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { completionKey } from './completion.js';

/**
 * A result a command has handed on (`flotilla wait`, `spawn-agent --wait`, `flotilla collect`
 * printed it; an agent's `flotilla run` printed its one-shot's answer) is read by whoever ran
 * the command: its completion in that reader's inbox — a person's `human`, or the agent whose
 * shell ran it — is claimed, as wait_for_agents claims it from a parent agent's (docs/decisions.md
 * "Handed on is read"). Left in new/, such completions piled up as unread mail for things the
 * person had seen, and an agent was shown (a vendor CLI: typed, one more paid turn) an answer
 * its model already had.
 *
 * The marker is written before the claim is tried, and a completion delivered later checks
 * it after its delivery (`claimIfHandedOn`); the harnesses' readers check it too before they
 * show a completion (`handedOn`), for one the bus spools in later or one they picked up just
 * before the claim. So one of them always finds the other.
 *
 * Named by the child's id first (gc removes it with the child's record), then the completion's
 * key, which a reader finds in the message's id, and the reader.
 */
function marker(layout: Layout, agentId: string, key: string, reader: string): string {
  return layout.marker(`${agentId}.handed-on.${key}.${reader}`);
}

/** Marks each task's answer handed on to `reader` (`human` or an agent id) and claims its completion if it is there. */
export async function markHandedOn(
  layout: Layout,
  reader: string,
  tasks: readonly { id: string; task: number | null | undefined }[],
): Promise<void> {
  for (const t of tasks) {
    if (!t.task) continue;
    const m = marker(layout, t.id, completionKey(t.id, t.task), reader);
    try {
      mkdirSync(dirname(m), { recursive: true });
      writeFileSync(m, '');
    } catch {
      continue; // The mail stays unread: nothing is lost.
    }
    await claimCompletion(layout, reader, t.id, t.task);
  }
}

/**
 * Who a command's printed results are handed on to: the agent that runs it (its process ancestry,
 * or in its sandbox its door's harness; §5.1), else a person; null when that cannot be told.
 */
export async function commandReader(layout: Layout): Promise<string | null> {
  const { callerLineage } = await import('../inbox/caller.js');
  try {
    return (await callerLineage(layout)).parent?.id ?? 'human';
  } catch {
    return null; // Nothing is marked: the mail stays unread, nothing is lost.
  }
}

/** After a completion to `to` was delivered: claimed at once when its answer was already handed on to `to`. */
export async function claimIfHandedOn(layout: Layout, agentId: string, task: number, to: string): Promise<void> {
  if (existsSync(marker(layout, agentId, completionKey(agentId, task), to)))
    await claimCompletion(layout, to, agentId, task);
}

/**
 * Whether `msg`, in the inbox of its addressee, is a completion whose answer was handed on to
 * that addressee: a reader claims it instead of showing it. One stat, only for completions.
 */
export function handedOn(layout: Layout, msg: { kind: string; from: string; to: string; id: string }): boolean {
  if (msg.kind !== 'completion') return false;
  const key = msg.id.slice(-10);
  return key.length === 10 && existsSync(marker(layout, msg.from, key, msg.to));
}

async function claimCompletion(layout: Layout, owner: string, agentId: string, task: number): Promise<void> {
  const key = completionKey(agentId, task);
  let names: string[];
  try {
    names = readdirSync(join(layout.inbox(owner), 'new'));
  } catch {
    return;
  }
  const { claim } = await import('../inbox/claim.js');
  // The completion's name carries its key (lifecycle/completion.ts): `<ms>.<time><key>.<n>.<host>.md`.
  for (const name of names.filter((n) => n.split('.')[1]?.endsWith(key))) {
    try {
      await claim(layout, owner, name);
    } catch {
      /* left unread */
    }
  }
}
