import { scrubHarnessMarkers } from '../tools/scrub.js';
import { PRIORITIES, type InboxMessage, type Priority } from './message.js';

/**
 * How messages reach a model and a pane (§4 Surfacing). Pure functions: the harness decides
 * when; this file decides how they look.
 */

const RANK: Record<Priority, number> = Object.fromEntries(PRIORITIES.map((p, i) => [p, i])) as Record<Priority, number>;

/** Reader order: urgent first, then high, normal, low; within a priority, oldest first (ids are time-sortable). */
export function compareForReader(
  a: Pick<InboxMessage, 'priority' | 'id'>,
  b: Pick<InboxMessage, 'priority' | 'id'>,
): number {
  return RANK[a.priority] - RANK[b.priority] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export function sortForReader<T extends Pick<InboxMessage, 'priority' | 'id'>>(messages: readonly T[]): T[] {
  return [...messages].sort(compareForReader);
}

/**
 * Escapes the harness's tags (`<inbox-message`, `</inbox-message`, `<agent-memory`…, in any
 * case, spacing or Unicode look-alike) inside untrusted text: see tools/scrub.ts.
 */
export function escapeMarkers(text: string): string {
  return scrubHarnessMarkers(text);
}

function attr(value: string | number): string {
  return (
    '"' +
    scrubHarnessMarkers(String(value))
      .replace(/&/g, '&amp;')
      .replace(/"/g, '&quot;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;') +
    '"'
  );
}

/**
 * One user turn holding every message, in reader order, each wrapped as data:
 * `<inbox-message id="…" from="…" kind="…" priority="…" summary="…">body</inbox-message>`.
 * Request and completion messages carry their extra fields as attributes.
 */
export function formatForModel(messages: readonly InboxMessage[]): string {
  return sortForReader(messages).map(formatOne).join('\n\n');
}

function formatOne(m: InboxMessage): string {
  const attrs: [string, string | number][] = [
    ['id', m.id],
    ['from', m.from],
    ['kind', m.kind],
    ['priority', m.priority],
    ['summary', m.summary],
  ];
  if (m.in_reply_to) attrs.push(['in_reply_to', m.in_reply_to]);
  // The model knows a broadcast from a direct message: the same words went to many agents.
  if (m.broadcast_id) attrs.push(['broadcast_id', m.broadcast_id]);
  if (m.kind === 'completion') {
    attrs.push(['status', m.status], ['turns', m.turns]);
    if (m.exit_reason) attrs.push(['exit_reason', m.exit_reason]);
    if (m.output_path) attrs.push(['output_path', m.output_path]);
  } else if (m.kind === 'approval_request') {
    attrs.push(['request_id', m.request_id], ['tool', m.tool]);
  } else if (m.kind === 'secret_request') {
    attrs.push(['request_id', m.request_id], ['key', m.key]);
  }
  const open = `<inbox-message ${attrs.map(([k, v]) => `${k}=${attr(v)}`).join(' ')}>`;
  const body = escapeMarkers(m.body.replace(/\s+$/, ''));
  return `${open}\n${body}${body ? '\n' : ''}</inbox-message>`;
}

/**
 * The one-line pane notice for a message: `✉ urgent completion from worker-7k2m9q: Found 3 TODOs [0lx8k2…]`.
 * Control characters are stripped so a sender cannot move the cursor or recolour the pane.
 */
export function noticeLine(
  m: Pick<InboxMessage, 'id' | 'from' | 'kind' | 'priority' | 'summary'>,
  maxWidth = 160,
): string {
  const prio = m.priority === 'normal' ? '' : `${m.priority} `;
  const kind = m.kind === 'message' ? 'message' : m.kind.replace(/_/g, ' ');
  // eslint-disable-next-line no-control-regex
  const clean = (s: string) => s.replace(/[\x00-\x1f\x7f\u009b]+/g, ' ');
  const head = `✉ ${prio}${kind} from ${clean(m.from)}: `;
  const tail = ` [${m.id.slice(0, 12)}]`;
  let summary = clean(m.summary);
  const room = Math.max(10, maxWidth - head.length - tail.length);
  if (summary.length > room) summary = summary.slice(0, room - 1) + '…';
  return head + summary + tail;
}
