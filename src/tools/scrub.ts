/**
 * Escapes the harness's own markers in text that came from outside the harness (tool output,
 * message bodies), so a command's output cannot pose as an inbox message, a memory block or a
 * system reminder (§6). Only the `<` of an opening or closing marker tag is touched:
 * `<inbox-message` → `&lt;inbox-message`; everything else is left as the model would see it.
 */

const MARKER_NAMES = ['inbox-message', 'agent-memory', 'system-reminder'] as const;

// `<`, optional whitespace, optional `/` and whitespace, then a marker name whose hyphen may also
// be written as `_`, whitespace or nothing (a model reads `< inbox_message` the same way).
const MARKER_RE = new RegExp(
  `<(?=\\s*/?\\s*(?:${MARKER_NAMES.map((n) => n.replace('-', '[-_\\s]*')).join('|')}))`,
  'gi',
);

/** Returns `text` with every harness marker tag escaped (`<` → `&lt;`). */
export function scrubHarnessMarkers(text: string): string {
  return text.replace(MARKER_RE, '&lt;');
}
