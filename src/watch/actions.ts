import type { Config } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import { recordLiveness } from '../fleet/liveness.js';
import { readRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import type { Decision } from '../approvals/answer.js';
import type { PendingApproval, WatchRow } from './rows.js';

/**
 * What the dashboard's keys do, each through the matching command's own code: attach
 * (select the agent's tmux window), send (deliver from `human`), cancel (`flotilla cancel`),
 * approve / deny (`flotilla approve` / `deny`). Each returns one line to show at the bottom
 * of the screen; none throws.
 */
export interface WatchActions {
  attach(row: WatchRow): Promise<string>;
  send(row: WatchRow, text: string): Promise<string>;
  cancel(row: WatchRow): Promise<string>;
  approve(approval: PendingApproval): Promise<string>;
  deny(approval: PendingApproval, reason: string): Promise<string>;
  /** Marks a failed agent's failure as seen (seen.ts); '' or why it could not. */
  seen(row: WatchRow): Promise<string>;
}

/** `config` is read at each action: the dashboard's config is live (config/live.ts). */
export function fleetActions(
  layout: Layout,
  config: () => Config,
  opts: { socket: string | null; env?: NodeJS.ProcessEnv },
): WatchActions {
  const env = opts.env ?? process.env;
  // The same checks and the same answer file as `flotilla approve` / `deny`.
  const answer = async (a: PendingApproval, decision: Decision, done: string): Promise<string> => {
    try {
      const { answerRequest } = await import('../approvals/answer.js');
      const r = await answerRequest(layout, config(), a.requestId, decision, { env, by: 'dashboard' });
      if (r.key && r.revoked) return `revoked ${a.requestId}: ${a.agentId} no longer holds '${r.key}'`;
      if (r.key && r.decision === 'approve')
        return `granted '${r.key}' to ${a.agentId}${r.expiresAt ? ` until ${r.expiresAt}` : ''}`;
      return done;
    } catch (err) {
      return `cannot answer ${a.requestId}: ${errorMessage(err)}`;
    }
  };
  const seen = async (row: WatchRow): Promise<string> => {
    if (row.need?.kind !== 'failed') return '';
    try {
      const { markSeen } = await import('./seen.js');
      markSeen(layout, row.id, row.need.stamp);
      return '';
    } catch (err) {
      return `cannot mark ${row.id} seen: ${errorMessage(err)}`;
    }
  };
  return {
    seen,
    async attach(row) {
      if (row.host)
        return (await import('./remote-actions.js')).attachElsewhere({ ...row, host: row.host }, config(), env);
      // Going to a failed agent is looking at its failure.
      await seen(row);
      if (row.pending)
        return `${row.id} has not started: it waits for a running slot (#${row.queuePosition ?? '?'} in line)`;
      if (!row.tmux)
        return `${row.id} has no tmux window (it runs in the background) — read it with 'flotilla transcript ${row.id}'`;
      try {
        const { Tmux, currentTmux } = await import('../tmux/index.js');
        const tmux = new Tmux({ socket: row.tmux.socket ?? opts.socket });
        await tmux.selectWindow(row.tmux.windowId);
        const here = await currentTmux(env);
        // A window in another session (spawned with --session) needs the client moved there too.
        if (here && here.sessionId !== row.tmux.sessionId) await tmux.switchClient(row.tmux.windowId);
        return here ? `switched to ${row.id}` : `selected ${row.id}'s window — attach with tmux to see it`;
      } catch (err) {
        return `cannot attach to ${row.id}: ${errorMessage(err)}`;
      }
    },

    async send(row, text) {
      if (!text.trim()) return 'nothing sent (empty message)';
      if (row.host)
        return (await import('./remote-actions.js')).sendElsewhere({ ...row, host: row.host }, layout, config(), text);
      try {
        const { deliver } = await import('../inbox/deliver.js');
        const { message } = await deliver(layout, { from: 'human', to: row.id, kind: 'message', body: text });
        return `sent ${message.id} to ${row.id}`;
      } catch (err) {
        return `cannot send to ${row.id}: ${errorMessage(err)}`;
      }
    },

    async cancel(row) {
      if (row.host) return (await import('./remote-actions.js')).cancelElsewhere({ ...row, host: row.host }, config());
      const rec = readRecord(layout, row.id);
      if (!rec) return `${row.id} is no longer in the registry`;
      if (recordLiveness(rec) === 'ended') return `${row.id} already ended (${rec.status})`;
      try {
        // `flotilla cancel`'s own code: SIGTERM, its foreground children, SIGKILL after the grace.
        const { cancelAgent } = await import('../lifecycle/cancel.js');
        const { cancelled, notes } = await cancelAgent(layout, config(), rec, { by: 'human' });
        const said = cancelled.length ? `cancelled ${cancelled.join(', ')}` : `${row.id} had already finished`;
        return notes.length ? `${said}; ${notes[0]}` : said;
      } catch (err) {
        return `cannot cancel ${row.id}: ${errorMessage(err)}`;
      }
    },

    approve(a) {
      return answer(a, { decision: 'approve', scope: 'once' }, `approved ${a.requestId}: ${a.agentId} may go on`);
    },

    deny(a, reason) {
      return answer(
        a,
        { decision: 'deny', reason: reason.trim() || 'denied from the dashboard' },
        `denied ${a.requestId} (${a.agentId})`,
      );
    },
  };
}
