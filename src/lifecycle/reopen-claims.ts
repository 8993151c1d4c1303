import type { Layout } from '../layout/layout.js';

/**
 * The tasks a dead agent had claimed go back to open, each with a note of who had it
 * (docs/design.md §15). After the terminal write: a claim is stale once its claimant has
 * ended, so a claimer racing this sees the same and reopens it itself.
 */
export async function reopenClaims(layout: Layout, agentId: string, reason: string): Promise<void> {
  try {
    const { reopenClaimsOf } = await import('../tasks/board.js');
    await reopenClaimsOf(layout, agentId, reason);
  } catch {
    // A board that cannot be written now is swept by the next claim or `task wait`.
  }
}
