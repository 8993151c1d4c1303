/**
 * A small POSIX-shell tokenizer for the shell gate (§7). It does what a shell does to find
 * commands — quote removal, escapes, `$'…'`, operators, redirections, here-documents — and
 * records the text of every command substitution (`$(…)`, backticks, `<(…)`) so the gate can
 * check it too. It does not expand variables or globs; the gate documents that limit.
 * Unterminated quotes run to the end of input, so a malformed command is still checked.
 */

export interface Word {
  /** The word after quote removal; expansions (`$HOME`, `$(…)`) are kept as written. */
  value: string;
  /** The same word as a glob source: characters that were quoted are backslash-escaped. */
  glob: string;
  /** Source text of command substitutions inside the word, to be checked as commands. */
  subs: string[];
  /** True when any part was quoted or escaped (matters for here-document delimiters). */
  quoted: boolean;
}

export type Token = { kind: 'word'; word: Word } | { kind: 'op'; op: string } | { kind: 'redirect'; op: string };

const OPERATORS = ['&&', '||', '|&', ';;', '&', '|', ';', '(', ')'];
const REDIRECTS = ['<<<', '<<-', '&>>', '<<', '>>', '>&', '<&', '>|', '<>', '&>', '<', '>'];
const GLOB_CHARS = /[*?[\]{}\\]/g;

const escapeGlob = (s: string): string => s.replace(GLOB_CHARS, '\\$&');

export function lex(src: string): Token[] {
  const tokens: Token[] = [];
  const n = src.length;
  let i = 0;
  let cur: Word | null = null;
  let heredocNext: { strip: boolean } | null = null;
  const heredocs: { delim: Word; strip: boolean }[] = [];

  const word = (): Word => (cur ??= { value: '', glob: '', subs: [], quoted: false });
  const literal = (s: string, quoted: boolean): void => {
    const w = word();
    w.value += s;
    w.glob += quoted ? escapeGlob(s) : s;
    if (quoted) w.quoted = true;
  };
  // Expansions are kept as text, matched literally by patterns.
  const expansion = (s: string): void => {
    const w = word();
    w.value += s;
    w.glob += escapeGlob(s);
  };
  const flush = (): void => {
    if (!cur) return;
    tokens.push({ kind: 'word', word: cur });
    if (heredocNext) heredocs.push({ delim: cur, strip: heredocNext.strip });
    heredocNext = null;
    cur = null;
  };

  const readDollar = (at: number, inDouble: boolean): number => {
    const next = src[at + 1];
    if (next === '(' && src[at + 2] === '(') {
      // Arithmetic $(( … )) runs no command; keep it as text.
      const { end } = readParen(src, at + 3);
      const close = src[end] === ')' ? end + 1 : end;
      expansion(src.slice(at, close));
      return close;
    }
    if (next === '(') {
      const { text, end } = readParen(src, at + 2);
      word().subs.push(text);
      expansion(src.slice(at, end));
      return end;
    }
    if (next === '{') {
      const close = src.indexOf('}', at + 2);
      const end = close === -1 ? n : close + 1;
      const inner = src.slice(at + 2, close === -1 ? n : close);
      expansion(/^[A-Za-z_][A-Za-z0-9_]*$/.test(inner) ? `$${inner}` : src.slice(at, end));
      return end;
    }
    if (next === "'" && !inDouble) {
      const { text, end } = readAnsiC(src, at + 2);
      literal(text, true);
      return end;
    }
    if (next === '"' && !inDouble) return readDouble(at + 2);
    const m = /^\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(src.slice(at, at + 66));
    if (m) {
      expansion(m[0]);
      return at + m[0].length;
    }
    literal('$', false);
    return at + 1;
  };

  const readDouble = (at: number): number => {
    word().quoted = true;
    let j = at;
    while (j < n && src[j] !== '"') {
      const c = src[j]!;
      if (c === '\\' && j + 1 < n) {
        const e = src[j + 1]!;
        if (e === '\n') j += 2;
        else if ('$`"\\'.includes(e)) {
          literal(e, true);
          j += 2;
        } else {
          literal('\\', true);
          j += 1;
        }
      } else if (c === '$') {
        j = readDollar(j, true);
      } else if (c === '`') {
        const { text, end } = readBacktick(src, j + 1);
        word().subs.push(text);
        expansion(src.slice(j, end));
        j = end;
      } else {
        literal(c, true);
        j++;
      }
    }
    return j + 1;
  };

  while (i < n) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\r') {
      flush();
      i++;
    } else if (c === '\n') {
      flush();
      tokens.push({ kind: 'op', op: '\n' });
      i++;
      while (heredocs.length) i = skipHeredoc(src, i, heredocs.shift()!);
    } else if (c === '#' && cur === null) {
      while (i < n && src[i] !== '\n') i++;
    } else if (c === '\\') {
      if (src[i + 1] !== '\n' && i + 1 < n) literal(src[i + 1]!, true);
      i += 2;
    } else if (c === "'") {
      const close = src.indexOf("'", i + 1);
      const end = close === -1 ? n : close;
      literal(src.slice(i + 1, end), true);
      word().quoted = true;
      i = end + 1;
    } else if (c === '"') {
      i = readDouble(i + 1);
    } else if (c === '`') {
      const { text, end } = readBacktick(src, i + 1);
      word().subs.push(text);
      expansion(src.slice(i, end));
      i = end;
    } else if (c === '$') {
      i = readDollar(i, false);
    } else if ((c === '<' || c === '>') && src[i + 1] === '(') {
      const { text, end } = readParen(src, i + 2);
      word().subs.push(text);
      expansion(src.slice(i, end));
      i = end;
    } else if (c === '<' || c === '>' || (c === '&' && src[i + 1] === '>')) {
      // A word of digits right before a redirection is its file descriptor (2>&1), not an argument.
      const pending = cur as Word | null;
      if (pending !== null && /^\d+$/.test(pending.value) && !pending.quoted) cur = null;
      flush();
      const op = REDIRECTS.find((r) => src.startsWith(r, i))!;
      tokens.push({ kind: 'redirect', op });
      if (op === '<<' || op === '<<-') heredocNext = { strip: op === '<<-' };
      i += op.length;
    } else {
      const op = OPERATORS.find((o) => src.startsWith(o, i));
      if (op) {
        flush();
        tokens.push({ kind: 'op', op });
        i += op.length;
      } else {
        literal(c, false);
        i++;
      }
    }
  }
  flush();
  return tokens;
}

/** Scans to the `)` closing a `$(` / `<(` at `start`, respecting quotes and nesting. */
export function readParen(src: string, start: number): { text: string; end: number } {
  let depth = 1;
  let j = start;
  while (j < src.length) {
    const c = src[j]!;
    if (c === '\\') j += 2;
    else if (c === "'") {
      const close = src.indexOf("'", j + 1);
      j = close === -1 ? src.length : close + 1;
    } else if (c === '"') {
      j++;
      while (j < src.length && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      j++;
    } else if (c === '`') j = readBacktick(src, j + 1).end;
    else if (c === '(') {
      depth++;
      j++;
    } else if (c === ')') {
      depth--;
      if (depth === 0) return { text: src.slice(start, j), end: j + 1 };
      j++;
    } else j++;
  }
  return { text: src.slice(start), end: src.length };
}

/** Scans to the closing backtick; `\`` inside stands for a backtick. */
function readBacktick(src: string, start: number): { text: string; end: number } {
  let j = start;
  let text = '';
  while (j < src.length && src[j] !== '`') {
    if (src[j] === '\\' && j + 1 < src.length && '`\\$'.includes(src[j + 1]!)) {
      text += src[j + 1];
      j += 2;
    } else text += src[j++];
  }
  return { text, end: j + 1 };
}

const ANSI_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v' };

/** Decodes `$'…'` (ANSI-C quoting), so `$'\x73udo'` is seen as `sudo`. */
function readAnsiC(src: string, start: number): { text: string; end: number } {
  let j = start;
  let text = '';
  while (j < src.length && src[j] !== "'") {
    if (src[j] !== '\\') {
      text += src[j++];
      continue;
    }
    const e = src[j + 1] ?? '';
    const hex = /^x([0-9a-fA-F]{1,2})/.exec(src.slice(j + 1, j + 4));
    const uni = /^[uU]([0-9a-fA-F]{1,8})/.exec(src.slice(j + 1, j + 11));
    const oct = /^[0-7]{1,3}/.exec(src.slice(j + 1, j + 4));
    if (hex) {
      text += String.fromCharCode(parseInt(hex[1]!, 16));
      j += 1 + hex[0].length;
    } else if (uni) {
      text += String.fromCodePoint(Math.min(parseInt(uni[1]!, 16), 0x10ffff));
      j += 1 + uni[0].length;
    } else if (oct) {
      text += String.fromCharCode(parseInt(oct[0], 8));
      j += 1 + oct[0].length;
    } else {
      text += ANSI_ESCAPES[e] ?? e;
      j += 2;
    }
  }
  return { text, end: j + 1 };
}

/**
 * Skips a here-document body that starts at `at`. An unquoted delimiter means the body is
 * expanded, so its command substitutions run: they are added to the delimiter word's `subs`.
 */
function skipHeredoc(src: string, at: number, doc: { delim: Word; strip: boolean }): number {
  let j = at;
  while (j < src.length) {
    const eol = src.indexOf('\n', j);
    const lineEnd = eol === -1 ? src.length : eol;
    const line = src.slice(j, lineEnd);
    if ((doc.strip ? line.replace(/^\t+/, '') : line) === doc.delim.value) return lineEnd + 1;
    if (!doc.delim.quoted) collectSubstitutions(src, j, lineEnd, doc.delim.subs);
    j = lineEnd + 1;
  }
  return src.length;
}

function collectSubstitutions(src: string, from: number, to: number, out: string[]): void {
  let j = from;
  while (j < to) {
    if (src[j] === '\\') j += 2;
    else if (src[j] === '$' && src[j + 1] === '(' && src[j + 2] !== '(') {
      const { text, end } = readParen(src, j + 2);
      out.push(text);
      j = end;
    } else if (src[j] === '`') {
      const { text, end } = readBacktick(src, j + 1);
      out.push(text);
      j = end;
    } else j++;
  }
}
