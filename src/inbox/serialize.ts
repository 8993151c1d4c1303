import { headerOf, type InboxMessage } from './message.js';

/**
 * Writes a message file: `---`, one `key: value` line per field, `---`, the body.
 * Hand-rolled (not gray-matter's stringify) so delivering needs no YAML library and the
 * output is fixed byte for byte: every value is either a plain word YAML cannot misread, a number, null, or a
 * JSON string (a JSON string is a valid YAML double-quoted scalar).
 */
export function serializeMessage(msg: InboxMessage): string {
  const lines = ['---'];
  for (const [key, value] of Object.entries(headerOf(msg))) {
    if (value === undefined) continue;
    if (value !== null && typeof value === 'object') {
      lines.push(`${key}:`);
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (v !== undefined) lines.push(`  ${k}: ${scalar(v)}`);
      }
    } else {
      lines.push(`${key}: ${scalar(value)}`);
    }
  }
  lines.push('---');
  return lines.join('\n') + '\n' + msg.body;
}

// Words YAML 1.1 (js-yaml, used by gray-matter) would read as booleans or null.
const RESERVED = /^(?:y|n|yes|no|on|off|true|false|null|~)$/i;

function scalar(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const s = String(value);
  // Starts with a letter or '_' and holds only word characters and '-': never a number, date or flow syntax.
  if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(s) && !RESERVED.test(s)) return s;
  return JSON.stringify(s);
}
