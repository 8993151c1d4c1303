import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import { holdAnswer, type AnswerRoute } from '../fleet/answer-proof.js';
import { recordLiveness } from '../fleet/liveness.js';
import { readRecord } from '../fleet/registry.js';
import { claim } from '../inbox/claim.js';
import type { InboxItem } from '../inbox/read.js';
import type { Layout } from '../layout/layout.js';
import { holdForRedaction } from '../secrets/redact.js';

/**
 * `flotilla approve` / `deny` of a secret request (§11), in the approving person's process:
 * approve reads the value here (environment or configured command) and hands it to the
 * waiting harness over that request's Unix socket; deny answers a pending request the same
 * way, or revokes a live grant by leaving an empty marker the harness watches for.
 */

export type SecretDecision = { decision: 'approve'; ttlSecs?: number } | { decision: 'deny'; reason: string };

export interface AnsweredSecret {
  requestId: string;
  agentId: string;
  key: string;
  decision: 'approve' | 'deny';
  /** A live grant was revoked (deny after approve). */
  revoked?: boolean;
  /** When the grant ends (approve). */
  expiresAt?: string;
}

export async function answerSecretRequest(
  layout: Layout,
  config: Pick<Config, 'agents' | 'security'>,
  item: InboxItem,
  decision: SecretDecision,
  opts: { env: NodeJS.ProcessEnv; interactive: boolean; by: AnswerRoute; now: number },
): Promise<AnsweredSecret> {
  const m = item.message;
  if (m.kind !== 'secret_request')
    throw new FlotillaError(`message ${m.id} is not a secret request`, { code: 'not-found' });
  const base = { requestId: m.request_id, agentId: m.from, key: m.key, decision: decision.decision };
  const agent = readRecord(layout, m.from);
  const state = agent ? recordLiveness(agent) : 'ended';
  if (state === 'ended' || state === 'dead') {
    if (!item.read) await claim(layout, 'human', item);
    throw new FlotillaError(
      `request ${m.request_id} is moot: agent '${m.from}' has ended${agent ? ` (${agent.status})` : ''}, and its grants ended with it`,
      { code: 'agent-ended' },
    );
  }
  const grant = agent?.secretGrants.find((g) => g.requestId === m.request_id && Date.parse(g.expiresAt) > opts.now);
  if (grant) {
    if (decision.decision === 'approve') {
      throw new FlotillaError(
        `request ${m.request_id} is already granted: '${m.from}' holds '${m.key}' until ${grant.expiresAt} — 'flotilla deny ${m.request_id}' revokes it`,
        { code: 'already-answered' },
      );
    }
    return { ...base, revoked: await revoke(layout, m.from, m.request_id) };
  }
  const socket = layout.secretSocket(m.request_id);
  if (item.read || !existsSync(socket)) {
    const age = opts.now - Date.parse(m.timestamp);
    if (age > config.agents.approval_timeout_secs * 1000) {
      throw new FlotillaError(
        `request ${m.request_id} expired: nobody answered within ${config.agents.approval_timeout_secs}s (agents.approval_timeout_secs), so '${m.from}' was told it was denied`,
        { code: 'expired' },
      );
    }
    throw new FlotillaError(
      `request ${m.request_id} ('${m.from}' asks for '${m.key}') was already answered, or its grant has ended — run 'flotilla inbox' to list pending requests`,
      { code: 'already-answered' },
    );
  }
  const { sendAnswer: send } = await import('../secrets/handoff.js');
  // The harness takes an answer only from a person's process that holds this file (fleet/answer-proof.ts).
  const proof = layout.approvalAnswer(m.request_id);
  const sendAnswer: typeof send = async (...args) => {
    const held = holdAnswer(proof, { requestId: m.request_id, decision: decision.decision }, opts.by);
    try {
      return await send(...args);
    } finally {
      held.release();
      rmSync(proof, { force: true });
    }
  };
  if (decision.decision === 'deny') {
    const reply = await sendAnswer(socket, { decision: 'deny', reason: decision.reason, by: opts.by });
    if (!reply.ok) throw new FlotillaError(`deny of ${m.request_id} failed: ${reply.message}`, { code: 'handoff' });
    return base;
  }
  const { resolveSecretValue } = await import('../secrets/resolve.js');
  let value: Buffer;
  try {
    value = await resolveSecretValue(m.key, config, { env: opts.env, interactive: opts.interactive });
  } catch (err) {
    throw err instanceof FlotillaError
      ? new FlotillaError(`${err.message} — the request stays pending`, { code: err.code, cause: err })
      : err;
  }
  const unhold = holdForRedaction(m.key, value.toString('utf8'));
  try {
    const ttl = decision.ttlSecs ?? m.ttl_secs;
    const reply = await sendAnswer(
      socket,
      { decision: 'approve', by: opts.by, ...(ttl ? { ttl_secs: ttl } : {}) },
      value,
    );
    if (!reply.ok) throw new FlotillaError(`approve of ${m.request_id} failed: ${reply.message}`, { code: 'handoff' });
    return { ...base, ...(reply.expires_at ? { expiresAt: reply.expires_at } : {}) };
  } finally {
    value.fill(0);
    unhold();
  }
}

/** Leaves the revoke marker and waits (≤ 5 s) for the harness to drop the grant from its record. */
async function revoke(layout: Layout, agentId: string, requestId: string): Promise<boolean> {
  mkdirSync(layout.secretsDir, { recursive: true, mode: 0o700 });
  writeFileSync(layout.secretRevoke(requestId), '', { mode: 0o600 });
  const end = Date.now() + 5000;
  while (Date.now() < end) {
    const rec = readRecord(layout, agentId);
    if (!rec || !rec.secretGrants.some((g) => g.requestId === requestId)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new FlotillaError(
    `asked '${agentId}' to revoke request ${requestId}, but it has not confirmed within 5 s — check 'flotilla status'`,
    { code: 'revoke-timeout' },
  );
}
