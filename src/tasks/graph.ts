/**
 * Refuses a dependency cycle when a task is added (docs/design.md §15): would `id`, blocked
 * by `blockedBy`, wait on itself through the board's `blocked_by` edges? Returns the cycle
 * (`id → … → id`) or null. Pure: `edges` reads one task's blockers.
 */
export function findCycle(
  id: string,
  blockedBy: readonly string[],
  edges: (task: string) => readonly string[],
): string[] | null {
  const seen = new Set<string>();
  // Depth-first from each blocker, keeping the path so the refusal can show it.
  const walk = (task: string, path: string[]): string[] | null => {
    if (task === id) return [...path, id];
    if (seen.has(task)) return null;
    seen.add(task);
    for (const next of edges(task)) {
      const found = walk(next, [...path, task]);
      if (found) return found;
    }
    return null;
  };
  for (const b of blockedBy) {
    const found = walk(b, [id]);
    if (found) return found;
  }
  return null;
}
