import type { Style } from './ansi.js';
import { sanitize, truncate } from './ansi.js';

/** One `<inbox-message …>…</inbox-message>` found in a surfaced injection (§4). */
export interface InboxNotice {
  id?: string;
  from?: string;
  kind?: string;
  priority?: string;
  /** The `summary` attribute when present, else the first non-empty line of the body. */
  summary: string;
}

const WRAPPER = /<inbox-message\b([^>]*)>([\s\S]*?)<\/inbox-message>/g;
const ATTR = /([A-Za-z_][\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g;

/** Reads the attributes and a one-line summary of every inbox wrapper in `text`. */
export function parseInboxWrappers(text: string): InboxNotice[] {
  const notices: InboxNotice[] = [];
  for (const m of text.matchAll(WRAPPER)) {
    const attrs: Record<string, string> = {};
    for (const a of (m[1] ?? '').matchAll(ATTR)) attrs[a[1]!] = a[2] ?? a[3] ?? a[4] ?? '';
    const summary = attrs.summary ?? firstLine(m[2] ?? '');
    notices.push({
      summary,
      ...(attrs.id === undefined ? {} : { id: attrs.id }),
      ...(attrs.from === undefined ? {} : { from: attrs.from }),
      ...(attrs.kind === undefined ? {} : { kind: attrs.kind }),
      ...(attrs.priority === undefined ? {} : { priority: attrs.priority }),
    });
  }
  return notices;
}

/** `✉ from worker-ab12cd (completion): Found 3 TODOs`, one line. */
export function formatInboxNotice(n: InboxNotice, style: Style, width: number): string {
  const urgent = n.priority === 'urgent' || n.priority === 'high' ? `[${n.priority}] ` : '';
  const head = `✉ ${urgent}from ${n.from ?? 'unknown'}${n.kind ? ` (${n.kind})` : ''}`;
  const line = truncate(`${head}: ${sanitize(n.summary)}`, Math.max(20, width - 1));
  return urgent ? style.yellow(line) : style.cyan(line);
}

/** Notices for an inbox injection: one per wrapped message, or its first line when unwrapped. */
export function inboxNoticeLines(injectionText: string, style: Style, width: number): string[] {
  const notices = parseInboxWrappers(injectionText);
  if (notices.length === 0) return [style.cyan(truncate(`✉ ${firstLine(injectionText)}`, Math.max(20, width - 1)))];
  return notices.map((n) => formatInboxNotice(n, style, width));
}

function firstLine(text: string): string {
  return (
    sanitize(text)
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '' && l !== '---') ?? '(empty message)'
  );
}
