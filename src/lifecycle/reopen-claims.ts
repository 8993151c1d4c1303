import type { Layout } from '../layout/layout.js';

/**
 * The tasks a dead agent had claimed go back to open, each with a note of who had it
 * (docs/design.md §15), and its file leases are released (§16). After the terminal write: a
 * claim or lease is stale once its holder has ended, so a claimer racing this sees the same
 * and frees it itself.
 */
export async function reopenClaims(layout: Layout, agentId: string, reason: string): Promise<void> {
  try {
    const { reopenClaimsOf } = await import('../team-store/board.js');
    await reopenClaimsOf(layout, agentId, reason);
  } catch {
    // A board that cannot be written now is swept by the next claim or `task wait`.
  }
  try {
    const { releaseAllOf } = await import('../team-store/leases.js');
    await releaseAllOf(layout, agentId, `its holder ended (${reason})`);
  } catch {
    // A lease file that cannot be written now is swept by the next take: the holder has ended.
  }
}

/** A task ended: the leases taken for it without a ttl go (§16), audited now rather than at the next take. */
export async function releaseTaskLeases(layout: Layout, agentId: string): Promise<void> {
  try {
    const { sweepHolder } = await import('../team-store/leases.js');
    await sweepHolder(layout, agentId);
  } catch {
    // Lapsed already (leases/lapse.ts): the next take sweeps them.
  }
}
