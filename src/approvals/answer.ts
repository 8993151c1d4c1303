import { existsSync, rmSync } from 'node:fs';
import { audit } from '../audit/audit.js';
import type { Config } from '../config/schema.js';
import { FlotillaError, refusal } from '../errors.js';
import { callerLineage } from '../inbox/caller.js';
import { recordLiveness } from '../fleet/liveness.js';
import { readRecord } from '../fleet/registry.js';
import { claim } from '../inbox/claim.js';
import { list, type InboxItem } from '../inbox/read.js';
import { holdAnswer, type AnswerRoute } from '../fleet/answer-proof.js';
import type { Layout } from '../layout/layout.js';
import type { ApprovalAnswer } from './types.js';

export type Decision =
  { decision: 'approve'; scope: 'once' | 'always'; ttlSecs?: number } | { decision: 'deny'; reason: string };

export interface AnsweredRequest {
  requestId: string;
  agentId: string;
  tool: string;
  summary: string;
  decision: 'approve' | 'deny';
  /** Secret requests (§11): the key, and for a grant its expiry; `revoked` when deny ended a live grant. */
  key?: string;
  expiresAt?: string;
  revoked?: boolean;
}

/**
 * `flotilla approve` / `flotilla deny` (§7): answers one pending approval request from the
 * human inbox. Only a person may answer — a caller with a registered agent among its
 * process ancestors is refused, whatever its environment says. That check is a courtesy: the
 * waiting harness decides (fleet/answer-proof.ts). The answer goes to
 * `state/approvals/<request>.answer`, held open by this process until the harness has taken
 * it, then the request message is claimed so it leaves the list of unread mail.
 */
export async function answerRequest(
  layout: Layout,
  config: Pick<Config, 'agents' | 'security'>,
  prefix: string,
  decision: Decision,
  opts: { pid?: number; env?: NodeJS.ProcessEnv; now?: number; interactive?: boolean; by?: AnswerRoute } = {},
): Promise<AnsweredRequest> {
  const verb = decision.decision;
  const caller = await callerLineage(layout, {
    ...(opts.pid === undefined ? {} : { pid: opts.pid }),
    env: opts.env ?? process.env,
  });
  if (caller.parent) {
    throw refusal(
      'not-a-person',
      `${verb} refused: approvals must come from a person, and this command runs inside agent '${caller.parent.id}' — ask a person to run 'flotilla ${verb} ${prefix}'`,
      { agent: caller.parent.id },
    );
  }
  const item = await findRequest(layout, prefix);
  const m = item.message;
  if (m.kind === 'secret_request') {
    const { answerSecretRequest } = await import('./answer-secret.js');
    const d =
      decision.decision === 'approve'
        ? { decision: 'approve' as const, ...(decision.ttlSecs ? { ttlSecs: decision.ttlSecs } : {}) }
        : decision;
    const done = await answerSecretRequest(layout, config, item, d, {
      env: opts.env ?? process.env,
      interactive: opts.interactive ?? false,
      by: opts.by ?? 'cli',
      now: opts.now ?? Date.now(),
    });
    return { ...done, tool: 'request_secret', summary: m.summary };
  }
  if (m.kind !== 'approval_request')
    throw new FlotillaError(`message ${m.id} is not an approval request`, { code: 'not-found' });
  const requestId = m.request_id;
  const answerFile = layout.approvalAnswer(requestId);
  const age = (opts.now ?? Date.now()) - Date.parse(m.timestamp);
  const expired = () =>
    new FlotillaError(
      `request ${requestId} expired: nobody answered within ${config.agents.approval_timeout_secs}s (agents.approval_timeout_secs), so '${m.from}' was told it was denied`,
      { code: 'expired' },
    );
  // The agent claims its request however it is settled (an answer, the timeout, a stopped turn).
  if (item.read || existsSync(answerFile)) {
    if (age > config.agents.approval_timeout_secs * 1000) throw expired();
    throw new FlotillaError(
      `request ${requestId} (${m.from}: ${m.summary}) was already answered — run 'flotilla inbox' to list pending requests`,
      { code: 'already-answered' },
    );
  }
  const agent = readRecord(layout, m.from);
  const state = agent ? recordLiveness(agent) : 'ended';
  if (state === 'ended' || state === 'dead') {
    await claim(layout, 'human', item);
    throw new FlotillaError(
      `request ${requestId} is moot: agent '${m.from}' has ended${agent ? ` (${agent.status})` : ''}, so nothing is waiting for an answer`,
      { code: 'agent-ended' },
    );
  }
  if (age > config.agents.approval_timeout_secs * 1000) {
    await claim(layout, 'human', item);
    throw expired();
  }
  const answer: ApprovalAnswer =
    decision.decision === 'approve'
      ? { requestId, decision: 'approve', scope: decision.scope }
      : { requestId, decision: 'deny', reason: decision.reason };
  const route = opts.by ?? 'cli';
  const held = holdAnswer(answerFile, answer, route);
  if (!(await held.taken)) {
    rmSync(answerFile, { force: true });
    throw new FlotillaError(
      `'${m.from}' did not take the answer to ${requestId} within 15 s; it is still waiting — check it with 'flotilla status' and answer again`,
      { code: 'not-taken' },
    );
  }
  await claim(layout, 'human', item);
  audit(layout, {
    event: 'approval',
    agent: m.from,
    request: requestId,
    tool: m.tool,
    decision: verb === 'approve' ? 'approved' : 'denied',
    by: route,
    source: route,
  });
  return { requestId, agentId: m.from, tool: m.tool, summary: m.summary, decision: verb };
}

/** The request whose `request_id` (or message id) starts with `prefix`; unread ones first. */
async function findRequest(layout: Layout, prefix: string): Promise<InboxItem> {
  const items = (await list(layout, 'human', { includeRead: true })).filter(
    (i) => i.message.kind === 'approval_request' || i.message.kind === 'secret_request',
  );
  const idOf = (i: InboxItem): string =>
    i.message.kind === 'approval_request' || i.message.kind === 'secret_request' ? i.message.request_id : i.message.id;
  const exact = items.filter((i) => idOf(i) === prefix || i.message.id === prefix);
  if (exact.length > 0) return exact.find((i) => !i.read) ?? exact[0]!;
  const matches = items.filter((i) => idOf(i).startsWith(prefix));
  // A prefix shared with answered requests still names the one that is pending.
  const pending = matches.filter((i) => !i.read);
  if (pending.length === 1) return pending[0]!;
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    throw new FlotillaError(`no approval request matches '${prefix}' — run 'flotilla inbox' to list pending requests`, {
      code: 'not-found',
    });
  }
  const shown = (pending.length > 0 ? pending : matches)
    .slice(0, 5)
    .map((i) => `${idOf(i)} (${i.message.from})`)
    .join(', ');
  throw new FlotillaError(
    `'${prefix}' matches ${pending.length > 0 ? pending.length : matches.length} requests: ${shown} — give more characters`,
    { code: 'ambiguous' },
  );
}
