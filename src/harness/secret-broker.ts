import { audit } from '../audit/audit.js';
import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import { errorMessage } from '../errors.js';
import type { AgentRecord, SecretGrantView } from '../fleet/record.js';
import { readProvenAnswer } from '../fleet/answer-proof.js';
import { readRecord } from '../fleet/registry.js';
import { newSortableId } from '../fleet/ids.js';
import type { Layout } from '../layout/layout.js';
import type { ApprovalAnswer } from '../approvals/types.js';
import { listenForAnswer, type HandoffHeader, type HandoffListener } from '../secrets/handoff.js';
import { MIN_SECRET_CHARS, secretSource } from '../secrets/keys.js';
import type { SecretRequestOutcome } from '../tools/request-secret.js';
import { SecretGrants } from './secret-grants.js';
import type { SessionEvent } from './session-types.js';

/**
 * One harness's secrets (§11): asks a person for a key and takes the value from the handoff
 * socket (or resolves it here when the person answers in this pane); the grants it makes are
 * held, lent and wiped by secret-grants.ts. Nothing about a value is written anywhere; the
 * audit trail gets key names only.
 */

export interface SecretBrokerOptions {
  layout: Layout;
  config: Pick<Config, 'security' | 'agents'>;
  agentId: string;
  /** The keys the agent's effective policy lists. */
  keys: readonly string[];
  /** The definition's `ttl_secs`: a grant's lifetime unless the person chooses another. */
  ttlSecs: number;
  /** Why nobody can answer here (background, headless), or null when a person can. */
  noApprover: string | null;
  /** The nearest ancestor whose policy lacks `key`, if any (no escalation, §7). */
  ancestorLacking: (key: string) => string | undefined;
  /** The harness's own environment: where a pane answer reads an `env` source. */
  env: NodeJS.ProcessEnv;
  emit: (e: SessionEvent) => void;
  setWaiting: (waiting: boolean) => void;
  /** The live grants changed (for the registry record). */
  onGrants: (grants: SecretGrantView[]) => void;
  log: Log;
  /**
   * Whether this agent's commands run in the OS sandbox; without it, the question says who else could read the value.
   */
  sandboxed: boolean;
}

/**
 * Said with every secret question of an unsandboxed agent (docs/security-trust.md "What this does not protect
 * against").
 */
export const UNSANDBOXED_WARNING = 'no sandbox: sibling agents of the same user could read the value while it is held';

type Answer =
  | { decision: 'approve'; value: Buffer; ttlSecs: number; by: string }
  | { decision: 'deny'; reason: string; by: string };

interface Pending {
  key: string;
  settle: (a: Answer) => SecretRequestOutcome;
}

export class SecretBroker {
  private readonly pending = new Map<string, Pending>();
  private readonly grants: SecretGrants;
  private closed = false;
  private closedReason = '';

  constructor(private readonly o: SecretBrokerOptions) {
    this.grants = new SecretGrants(o);
  }

  /**
   * The live grants as environment variables for one command. Release after the command
   * and its output's redaction: an expired grant is wiped only when no command holds it.
   */
  lease(): { env: Record<string, string>; release: () => void } {
    return this.grants.lease();
  }

  /** request_secret: refuses at once, or asks a person and waits. */
  async request(key: string, reason: string | undefined, signal: AbortSignal): Promise<SecretRequestOutcome> {
    const { o } = this;
    const refuse = (why: string, rule: string): SecretRequestOutcome => {
      o.log.warn({ key, rule }, 'secret request refused');
      audit(o.layout, { event: 'secret_denied', agent: o.agentId, key, rule, reason: why });
      return { granted: false, key, reason: why };
    };
    if (this.closed) return refuse('the agent is ending', 'ended');
    if (!o.keys.includes(key)) {
      return refuse(
        `'${key}' is not among the keys this agent's definition may request (permissions.secrets: ${o.keys.join(', ') || 'none'})`,
        'not-in-definition',
      );
    }
    const lacking = o.ancestorLacking(key);
    if (lacking)
      return refuse(
        `'${lacking}', an ancestor of this agent, may not request '${key}', so it cannot be granted here (no escalation, §7)`,
        'parent',
      );
    if (o.noApprover)
      return refuse(
        `${o.noApprover}: nobody can approve a secret request here, so it is denied at once`,
        'no-approver',
      );
    return this.grants.live(key) ?? this.ask(key, reason, signal);
  }

  /** An answer typed in the pane (`y` / `n`). */
  answer(a: ApprovalAnswer): void {
    const p = this.pending.get(a.requestId);
    if (!p) return;
    if (a.decision === 'deny') {
      p.settle({ decision: 'deny', reason: a.reason, by: 'pane' });
      return;
    }
    void import('../secrets/resolve.js')
      .then(({ resolveSecretValue }) => resolveSecretValue(p.key, this.o.config, { env: this.o.env }))
      .then((value) => {
        if (!this.pending.has(a.requestId)) {
          value.fill(0);
          return;
        }
        p.settle({ decision: 'approve', value, ttlSecs: this.o.ttlSecs, by: 'pane' });
        value.fill(0);
      })
      .catch((err: unknown) =>
        p.settle({ decision: 'deny', reason: `approved in the pane, but ${errorMessage(err)}`, by: 'pane' }),
      );
  }

  /** The agent is ending: pending requests are denied, every grant is revoked and wiped. */
  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.closedReason = reason;
    for (const p of [...this.pending.values()])
      p.settle({ decision: 'deny', reason: `the agent ended (${reason})`, by: 'ended' });
    this.grants.revokeAll(`agent ended (${reason})`);
  }

  private async ask(key: string, reason: string | undefined, signal: AbortSignal): Promise<SecretRequestOutcome> {
    const { o } = this;
    const requestId = newSortableId();
    const ttlSecs = o.ttlSecs;
    audit(o.layout, { event: 'secret_requested', agent: o.agentId, key, request: requestId, ttl_secs: ttlSecs });
    let settle!: (a: Answer) => SecretRequestOutcome;
    const settled = new Promise<SecretRequestOutcome>((resolve) => {
      settle = (a) => {
        const out = this.settle(requestId, key, a);
        resolve(out);
        return out;
      };
    });
    let listener: HandoffListener;
    try {
      listener = await listenForAnswer(o.layout.secretSocket(requestId), async (h, value) =>
        this.fromSocket(requestId, h, value),
      );
    } catch (err) {
      audit(o.layout, {
        event: 'secret_denied',
        agent: o.agentId,
        key,
        request: requestId,
        rule: 'handoff',
        reason: errorMessage(err),
      });
      return { granted: false, key, reason: `the handoff socket could not be opened: ${errorMessage(err)}` };
    }
    const why = reason?.trim() ? reason.trim().replace(/\s+/g, ' ') : '';
    const { deliver } = await import('../inbox/deliver.js');
    const delivered = await deliver(o.layout, {
      from: o.agentId,
      to: 'human',
      kind: 'secret_request',
      request_id: requestId,
      key,
      ttl_secs: ttlSecs,
      priority: 'high',
      summary: `${o.agentId} asks for secret '${key}' for ${ttlSecs} s${why ? `: ${why}` : ''}`.slice(0, 200),
      body:
        `Agent ${o.agentId} asks for the secret '${key}' for ${ttlSecs} s.${why ? `\n\nReason: ${why}` : ''}\n\n` +
        (o.sandboxed ? '' : `Warning: ${UNSANDBOXED_WARNING}.\n\n`) +
        `Approve with \`flotilla approve ${requestId} [--ttl SECS]\` (the value is read in your shell: ${describeSource(key, o.config)}), ` +
        `or deny with \`flotilla deny ${requestId}\`; or type y / n in its window, or a / d in the dashboard.`,
    }).catch(() => undefined);
    const timeoutSecs = o.config.agents.approval_timeout_secs;
    const timer = setTimeout(
      () =>
        settle({
          decision: 'deny',
          reason: `nobody answered within ${timeoutSecs}s (agents.approval_timeout_secs)`,
          by: 'timeout',
        }),
      timeoutSecs * 1000,
    );
    const onAbort = () => settle({ decision: 'deny', reason: 'the turn was stopped before an answer', by: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
    this.pending.set(requestId, { key, settle });
    o.setWaiting(true);
    o.emit({
      type: 'approval',
      request: {
        id: requestId,
        agentId: o.agentId,
        tool: 'request_secret',
        kind: 'secret',
        key,
        ttlSecs,
        ...(why ? { reason: why } : {}),
        ...(o.sandboxed ? {} : { warning: UNSANDBOXED_WARNING }),
        summary: `secret '${key}' for ${ttlSecs} s${why ? ` — ${why}` : ''}`,
        createdAt: new Date().toISOString(),
      },
    });
    // Closed while the request was being filed: close() saw no pending request to deny.
    if (this.closed) settle({ decision: 'deny', reason: `the agent ended (${this.closedReason})`, by: 'ended' });
    const outcome = await settled;
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    listener.close();
    if (delivered)
      void import('../inbox/claim.js')
        .then(({ claim }) => claim(o.layout, 'human', delivered.file))
        .catch(() => undefined);
    return outcome;
  }

  private fromSocket(
    requestId: string,
    h: HandoffHeader,
    value: Buffer,
  ): Promise<{ ok: boolean; message: string; expires_at?: string; settled: boolean }> {
    const p = this.pending.get(requestId);
    if (!p)
      return Promise.resolve({ ok: false, message: 'this request is no longer waiting for an answer', settled: true });
    // Whoever connects is not trusted for it: the answering process must prove it is a person's.
    const proven = readProvenAnswer(this.o.layout, this.o.layout.approvalAnswer(requestId));
    if (!proven?.ok) {
      const reason = proven ? proven.reason : 'no answering process holds the answer file';
      audit(this.o.layout, {
        event: 'approval_refused',
        agent: this.o.agentId,
        request: requestId,
        tool: 'request_secret',
        route: proven?.route ?? 'unknown',
        reason,
      });
      return Promise.resolve({ ok: false, message: `answer refused: ${reason}`, settled: false });
    }
    const by = proven.route;
    if (h.decision === 'deny') {
      p.settle({ decision: 'deny', reason: h.reason?.trim() || 'denied by a person', by });
      return Promise.resolve({ ok: true, message: 'denied', settled: true });
    }
    if (value.toString('utf8').length < MIN_SECRET_CHARS) {
      return Promise.resolve({
        ok: false,
        message: `the value is shorter than ${MIN_SECRET_CHARS} characters: too short to redact safely`,
        settled: false,
      });
    }
    const ttl = typeof h.ttl_secs === 'number' && h.ttl_secs > 0 ? h.ttl_secs : this.o.ttlSecs;
    const out = p.settle({ decision: 'approve', value, ttlSecs: ttl, by });
    return Promise.resolve(
      out.granted
        ? { ok: true, message: `granted until ${out.expiresAt}`, expires_at: out.expiresAt, settled: true }
        : { ok: false, message: out.reason, settled: true },
    );
  }

  /** Settles a pending request exactly once: a grant (the value copied into a buffer of its own) or a denial. */
  private settle(requestId: string, key: string, a: Answer): SecretRequestOutcome {
    const { o } = this;
    if (!this.pending.delete(requestId)) return { granted: false, key, reason: 'already answered' };
    if (this.pending.size === 0) o.setWaiting(false);
    o.emit({
      type: 'approval_resolved',
      requestId,
      decision: a.decision,
      by:
        a.by === 'pane' || a.by === 'timeout' || a.by === 'dashboard' || a.by === 'chat'
          ? a.by
          : a.by === 'aborted' || a.by === 'ended'
            ? 'aborted'
            : 'cli',
    });
    if (a.decision === 'deny') {
      audit(o.layout, {
        event: 'secret_denied',
        agent: o.agentId,
        key,
        request: requestId,
        by: a.by,
        reason: a.reason,
      });
      return {
        granted: false,
        key,
        reason:
          a.by === 'timeout' || a.by === 'aborted' || a.by === 'ended' ? a.reason : `a person denied it: ${a.reason}`,
      };
    }
    return this.grants.add(requestId, key, a);
  }
}

/** The nearest ancestor whose policy does not list `key` (a child never gets what its parent may not, §7). */
export function ancestorLacking(layout: Layout, rec: AgentRecord, key: string): string | undefined {
  const seen = new Set<string>();
  for (let id = rec.parentId; id && !seen.has(id) && seen.size < 64;) {
    seen.add(id);
    const anc = readRecord(layout, id);
    if (!anc) return id;
    if (!anc.effectivePolicy.secrets.includes(key)) return id;
    id = anc.parentId;
  }
  return undefined;
}

/** Where the approver's process reads a key's value, for the request message. */
function describeSource(key: string, config: Pick<Config, 'security'>): string {
  const src = secretSource(key, config);
  return 'command' in src ? `security.secrets.${key}.command` : `$${src.env}`;
}
