import matter from 'gray-matter';
import { MessageFieldError, checkHeader, type InboxMessage } from './message.js';

/** What is wrong with a file that is not a valid message (it goes to `bad/`). */
export class BadMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadMessageError';
  }
}

// gray-matter evaluates `---js` frontmatter with eval(); mail is untrusted, so that engine is refused.
const refuse = {
  parse(): object {
    throw new BadMessageError('only YAML frontmatter is accepted');
  },
};
const OPTIONS = { engines: { javascript: refuse, js: refuse } };

/**
 * Parses a message file's text. Throws BadMessageError naming the first problem.
 * Passing options also keeps gray-matter from caching every file it has seen.
 */
export function parseMessage(text: string): InboxMessage {
  if (!/^---\r?\n/.test(text)) throw new BadMessageError("the file does not start with a '---' frontmatter line");
  let parsed: { data: Record<string, unknown>; content: string };
  try {
    parsed = matter(text, OPTIONS);
  } catch (err) {
    if (err instanceof BadMessageError) throw err;
    throw new BadMessageError(`invalid YAML frontmatter: ${firstLine(err)}`);
  }
  const data = normalize(parsed.data);
  try {
    return { ...checkHeader(data), body: parsed.content };
  } catch (err) {
    if (err instanceof MessageFieldError) throw new BadMessageError(err.message);
    throw err;
  }
}

/** YAML reads an unquoted ISO timestamp as a Date; the schema wants the ISO string back. */
function normalize(data: unknown): unknown {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return data;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) out[k] = v instanceof Date ? v.toISOString() : v;
  return out;
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0] ?? text;
}
