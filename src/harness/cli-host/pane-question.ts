import { existsSync, rmSync } from 'node:fs';
import { audit } from '../../audit/audit.js';
import type { Log } from '../../audit/logger.js';
import type { Config } from '../../config/schema.js';
import { readProvenAnswer } from '../../fleet/answer-proof.js';
import { isTerminal } from '../../fleet/record.js';
import { readRecord } from '../../fleet/registry.js';
import type { Layout } from '../../layout/layout.js';
import type { Runtime } from '../../runtimes/index.js';
import { sleep } from '../../sleep.js';
import { openQuestions, settleRequest, type OpenQuestion, type Settled } from '../../approvals/hosted-cli.js';
import type { Typist } from './idle.js';

const TICK_MS = 200;
/**
 * The CLI draws its prompt as soon as the hook returns. Not on screen this long after the
 * question was filed: a person answered it between two looks (or the CLI never asked).
 */
const SHOWN_WITHIN_MS = 5_000;
/** Ticks in a row without the prompt before it counts as answered in the pane: one redraw is not an answer. */
const GONE_TICKS = 2;

/**
 * The shim's half of a question the CLI asks in its own pane (`runtime.paneQuestion`: Codex;
 * docs/runtimes.md, "Approvals"). The permission hook filed it in the fleet's queue and left
 * the decision to the CLI, which shows its prompt; whichever answer comes first wins:
 * - the queue's (`flotilla approve` / `deny`, the dashboard; proven a person's by
 *   fleet/answer-proof.ts): the shim presses the prompt's own key while the prompt is on
 *   screen — approve runs the call once; deny refuses it, which stops the CLI's turn, so the
 *   reason is then typed to the CLI as the person's next words;
 * - the pane's: the prompt went away (or was answered before the shim saw it) without the
 *   queue's answer, so the request is withdrawn (`by: pane`) and a late `flotilla approve`
 *   says it was already answered;
 * - nobody within `agents.approval_timeout_secs`: the shim refuses it, as the harness would.
 * Questions are answered oldest first: the CLI shows one prompt at a time.
 */
export function answerPaneQuestions(d: {
  layout: Layout;
  config: Config;
  runtime: Runtime;
  agentId: string;
  typist: Typist;
  log: Log;
}): { close(): Promise<void> } {
  const screen = d.runtime.paneQuestion;
  if (!screen) return { close: async () => undefined };
  const seen = new Map<string, { shown: boolean; goneTicks: number }>();
  let closed = false;

  const settle = async (q: OpenQuestion, settled: Settled): Promise<void> => {
    seen.delete(q.requestId);
    await settleRequest(d.layout, d.agentId, d.runtime.name, q, settled);
  };

  /** Presses the prompt's key for the fleet's answer; a refusal's reason follows once the prompt has gone. */
  const press = async (approved: boolean, reason: string, by: 'person' | 'timeout' = 'person'): Promise<void> => {
    await d.typist.key(approved ? screen.approve : screen.deny);
    if (approved) return;
    const end = Date.now() + 5_000;
    while (Date.now() < end && (await d.typist.screen().catch(() => '')).includes(screen.shows)) await sleep(TICK_MS);
    // The input box takes keys a moment after the prompt closes.
    await sleep(500);
    await d.typist.submit(`${by === 'person' ? 'A person' : 'The fleet'} refused that call: ${reason}`);
  };

  const tick = async (): Promise<void> => {
    const q = openQuestions(d.layout, d.agentId)[0];
    if (!q) return;
    const rec = readRecord(d.layout, d.agentId);
    if (!rec || isTerminal(rec.status)) return settle(q, { approved: undefined, by: 'aborted', reason: '' });
    const state = seen.get(q.requestId) ?? { shown: false, goneTicks: 0 };
    seen.set(q.requestId, state);
    const showing = (await d.typist.screen().catch(() => '')).includes(screen.shows);
    if (showing) {
      state.shown = true;
      state.goneTicks = 0;
    } else if (state.shown && ++state.goneTicks >= GONE_TICKS) {
      // Answered in the pane (or the turn was stopped there): the queue's request is withdrawn.
      return settle(q, { approved: undefined, by: 'pane', reason: '' });
    }
    if (showing && q.always) {
      await settle(q, { approved: true, by: 'always', reason: '' });
      await press(true, '');
      return;
    }
    const answer = showing ? queueAnswer(d, q) : null;
    if (answer) {
      // Taken (the answering command returns) and settled before the keys: the request is answered now.
      await settle(q, answer);
      await press(answer.approved, answer.reason);
      return;
    }
    const age = Date.now() - q.at;
    if (age >= d.config.agents.approval_timeout_secs * 1000) {
      const reason = `nobody answered within ${d.config.agents.approval_timeout_secs}s (agents.approval_timeout_secs)`;
      if (!showing) return settle(q, { approved: undefined, by: 'aborted', reason: '' });
      await settle(q, { approved: false, by: 'timeout', reason });
      await press(false, reason, 'timeout');
      return;
    }
    if (!state.shown && age >= SHOWN_WITHIN_MS) {
      d.log.info(
        { request: q.requestId },
        `${d.runtime.title}'s prompt for ${q.summary} is not on screen: answered in the pane; the queued request is withdrawn`,
      );
      await settle(q, { approved: undefined, by: 'pane', reason: '' });
    }
  };

  const loop = (async () => {
    while (!closed) {
      try {
        await tick();
      } catch (err) {
        d.log.warn({ err: String(err) }, 'answering a pane question failed');
      }
      await sleep(TICK_MS);
    }
  })();

  return {
    async close() {
      closed = true;
      await loop;
      // The CLI is gone: nothing waits for these any more.
      for (const q of openQuestions(d.layout, d.agentId))
        await settle(q, { approved: undefined, by: 'aborted', reason: '' });
    },
  };
}

/**
 * The queue's answer to `q`, proven a person's (fleet/answer-proof.ts); one whose proof fails is audited and dropped.
 */
function queueAnswer(
  d: { layout: Layout; agentId: string },
  q: OpenQuestion,
): (Settled & { approved: boolean }) | null {
  const answerFile = d.layout.approvalAnswer(q.requestId);
  if (!existsSync(answerFile)) return null;
  const proven = readProvenAnswer(d.layout, answerFile);
  if (proven && !proven.ok) {
    // Audited before the file goes, so whoever sees it gone finds the refusal written.
    audit(d.layout, {
      event: 'approval_refused',
      agent: d.agentId,
      request: q.requestId,
      tool: q.tool,
      route: proven.route,
      reason: proven.reason,
    });
    rmSync(answerFile, { force: true });
    return null;
  }
  if (!proven?.ok) return null;
  const body = proven.body as { decision?: string; scope?: string; reason?: string };
  const approved = body.decision === 'approve';
  const reason = approved ? '' : body.reason || 'denied by a person';
  return { approved, by: proven.route, reason, always: approved && body.scope === 'always' };
}
