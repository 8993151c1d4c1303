import { existsSync, rmSync } from 'node:fs';
import { audit } from '../audit/audit.js';
import { readProvenAnswer } from '../fleet/answer-proof.js';
import { newSortableId } from '../fleet/ids.js';
import { summarize } from '../inbox/message.js';
import type { Layout } from '../layout/layout.js';
import type { ApprovalAnswer, ApprovalEvent, ApprovalRequest } from './types.js';
import type { ToolCall } from '../tools/types.js';

/**
 * Approvals (§7): a tool call that needs a person waits here. The question goes to the
 * agent's pane (answered by typing) and to the human inbox (answered with `flotilla approve
 * / deny` or the dashboard, which write `state/approvals/<request>.answer`). This harness,
 * not the answering client, decides whether an answer file came from a person
 * (fleet/answer-proof.ts); one that did not is refused, audited and the question stays open.
 * The audit names the route as it is known: `pane` (keys typed in the agent's window),
 * `cli`, `dashboard`, `chat`. No answer within `agents.approval_timeout_secs` is a denial.
 */

export type ApprovalOutcome = { approved: true; by: string } | { approved: false; by: string; reason: string };

/** One line a person can judge: `$ npm publish`, `write src/app.ts (1.2 KB)`. */
export function describeCall(call: ToolCall): string {
  const input = (call.input ?? {}) as Record<string, unknown>;
  if (typeof input.command === 'string') return `$ ${input.command}`;
  if (typeof input.path === 'string') {
    const size = typeof input.content === 'string' ? ` (${input.content.length} chars)` : '';
    return `${call.name} ${input.path}${size}`;
  }
  return `${call.name} ${JSON.stringify(call.input).slice(0, 160)}`;
}

export class Approvals {
  private readonly always = new Set<string>();
  private pending: { request: ApprovalRequest; settle: (a: ApprovalOutcome) => void } | null = null;

  constructor(
    private readonly layout: Layout,
    private readonly agentId: string,
    private readonly timeoutSecs: number,
    private readonly emit: (e: ApprovalEvent) => void,
    private readonly setWaiting: (waiting: boolean) => void,
  ) {}

  /**
   * Asks a person about one call; resolves with the decision. A stopped turn (Ctrl-C, timeout) withdraws the question.
   */
  async ask(
    call: ToolCall,
    mode: string,
    signal?: AbortSignal,
    opts: { ignoreAlways?: boolean } = {},
  ): Promise<ApprovalOutcome> {
    // "Always" covers the commands a person could judge; an opaque shell command is asked each time.
    if (this.always.has(call.name) && !opts.ignoreAlways) return { approved: true, by: 'always' };
    if (signal?.aborted) return { approved: false, by: 'aborted', reason: 'the turn was stopped' };
    const request: ApprovalRequest = {
      id: newSortableId(),
      agentId: this.agentId,
      tool: call.name,
      summary: describeCall(call),
      createdAt: new Date().toISOString(),
      mode,
    };
    const { deliver } = await import('../inbox/deliver.js');
    const delivered = await deliver(this.layout, {
      from: this.agentId,
      to: 'human',
      kind: 'approval_request',
      request_id: request.id,
      tool: call.name,
      priority: 'high',
      summary: summarize(`${this.agentId} asks to run ${request.summary}`),
      body: `Agent ${this.agentId} asks to run:\n\n    ${request.summary}\n\nAnswer with \`flotilla approve ${request.id}\` or \`flotilla deny ${request.id} --reason "…"\`, or type y / a / n in its window.`,
    }).catch(() => undefined);
    this.setWaiting(true);
    this.emit({ type: 'approval', request });
    const outcome = await new Promise<ApprovalOutcome>((resolve) => {
      const answerFile = this.layout.approvalAnswer(request.id);
      const finish = (o: ApprovalOutcome, by: 'pane' | 'cli' | 'dashboard' | 'chat' | 'timeout' | 'aborted') => {
        clearTimeout(timer);
        clearInterval(poll);
        signal?.removeEventListener('abort', onAbort);
        this.pending = null;
        rmSync(answerFile, { force: true });
        // Settled however: the request leaves the human inbox, so no later answer claims to count.
        if (delivered)
          void import('../inbox/claim.js')
            .then(({ claim }) => claim(this.layout, 'human', delivered.file))
            .catch(() => undefined);
        this.emit({ type: 'approval_resolved', requestId: request.id, decision: o.approved ? 'approve' : 'deny', by });
        resolve(o);
      };
      const timer = setTimeout(
        () =>
          finish(
            {
              approved: false,
              by: 'timeout',
              reason: `nobody answered within ${this.timeoutSecs}s (agents.approval_timeout_secs)`,
            },
            'timeout',
          ),
        this.timeoutSecs * 1000,
      );
      // Only while a question is open: a cheap check for the CLI's answer file.
      const poll = setInterval(() => {
        if (!existsSync(answerFile)) return;
        const proven = readProvenAnswer(this.layout, answerFile);
        if (!proven) return; // half-written: next tick
        if (!proven.ok) {
          // Audited before the file goes, so whoever sees it gone finds the refusal written.
          audit(this.layout, {
            event: 'approval_refused',
            agent: this.agentId,
            request: request.id,
            tool: call.name,
            route: proven.route,
            reason: proven.reason,
          });
          rmSync(answerFile, { force: true });
          return;
        }
        rmSync(answerFile, { force: true });
        finish(this.apply(proven.body as unknown as ApprovalAnswer, call.name, proven.route), proven.route);
      }, 150);
      const onAbort = () =>
        finish({ approved: false, by: 'aborted', reason: 'the turn was stopped before an answer' }, 'aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending = { request, settle: (o) => finish(o, 'pane') };
    });
    // A stopped turn leaves the record to the session, which is going idle or ending.
    if (outcome.by !== 'aborted') this.setWaiting(false);
    audit(this.layout, {
      event: 'approval',
      agent: this.agentId,
      request: request.id,
      tool: call.name,
      decision: outcome.approved ? 'approved' : 'denied',
      by: outcome.by,
      ...(outcome.approved ? {} : { reason: outcome.reason }),
    });
    return outcome;
  }

  /** An answer typed in the pane. */
  answer(a: ApprovalAnswer): void {
    if (!this.pending || this.pending.request.id !== a.requestId) return;
    // Keys typed in the pane: a person at its terminal, as far as anything can tell (docs/security.md).
    this.pending.settle(this.apply(a, this.pending.request.tool, 'pane'));
  }

  private apply(a: ApprovalAnswer, tool: string, by: string): ApprovalOutcome {
    if (a.decision === 'approve') {
      if (a.scope === 'always') this.always.add(tool);
      return { approved: true, by };
    }
    return { approved: false, by, reason: a.reason || 'denied by a person' };
  }
}
