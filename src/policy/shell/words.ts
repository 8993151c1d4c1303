import { children, type SyntaxNode } from './syntax.js';

/**
 * What one shell word becomes after brace expansion and quote removal, the way bash reads
 * it. A word built (even in part) from an expansion has no literal `value`: the gate cannot
 * know it statically. Quoted glob characters stay literal; unquoted ones make a pattern.
 */
export interface Word {
  /** The literal word after quote removal; undefined when part of it comes from an expansion. */
  value: string | undefined;
  /** Expansions shown as `$NAME` (`"${HOME:?}"/` → `$HOME/`), for comparing operands. */
  symbolic: string;
  /** Glob source: quoted characters backslash-escaped, expansions as `*` (they can be anything). */
  glob: string;
  /** An unquoted `*`, `?` or `[` makes it a pathname pattern. */
  hasGlob: boolean;
  /** Made by brace expansion (`{rm,-rf,/}`). */
  braced: boolean;
  /** The source text of the whole word. */
  raw: string;
}

// An expansion is kept in the escaped form as OPEN name CLOSE.
const OPEN = '\u0001';
const CLOSE = '\u0002';
const SPECIAL = new Set(['\\', '{', '}', ',', '*', '?', '[', ']', '~', '.', OPEN, CLOSE]);
const MAX_BRACE_WORDS = 256;

/** The words a word node expands to (brace expansion can make several). */
export function evaluateWord(node: SyntaxNode, source: string, opts: { braces?: boolean } = {}): Word[] {
  const escaped = escapedForm(node, source);
  const parts = opts.braces === false ? [escaped] : braceExpand(escaped);
  return parts.map((e) => toWord(e, node.text, parts.length > 1));
}

function toWord(e: string, raw: string, braced: boolean): Word {
  let value = '';
  let symbolic = '';
  let glob = '';
  let dynamic = false;
  let hasGlob = false;
  for (let k = 0; k < e.length; k++) {
    const c = e[k]!;
    if (c === '\\' && k + 1 < e.length) {
      const n = e[++k]!;
      value += n;
      symbolic += n;
      glob += `\\${n}`;
    } else if (c === OPEN) {
      const end = e.indexOf(CLOSE, k);
      const name = e.slice(k + 1, end);
      dynamic = true;
      symbolic += `$${name}`;
      glob += '*';
      k = end;
    } else {
      if (c === '*' || c === '?' || c === '[') hasGlob = true;
      value += c;
      symbolic += c;
      glob += c;
    }
  }
  return { value: dynamic ? undefined : value, symbolic, glob, hasGlob, braced, raw };
}

function escapedForm(node: SyntaxNode, source: string): string {
  switch (node.type) {
    case 'word':
      return unquoted(node.text);
    case 'number':
    case 'file_descriptor':
    case 'variable_name':
    case 'brace_expression':
      return node.text;
    case 'raw_string':
      return quote(node.text.slice(1, -1));
    case 'ansi_c_string':
      return quote(decodeAnsiC(node.text.slice(2, -1)));
    case 'string':
    case 'translated_string':
      return doubleQuoted(node, source);
    case 'simple_expansion':
      return expansion(node.text.slice(1));
    case 'expansion': {
      const name = children(node).find((c) => c.type === 'variable_name' || c.type === 'special_variable_name');
      return expansion(name ? name.text : '?');
    }
    case 'concatenation': {
      let out = '';
      let at = node.startIndex;
      const parts = children(node);
      parts.forEach((c, k) => {
        // `$"…"` is a translated string: the `$` adds nothing.
        const translated = c.type === '$' && parts[k + 1]?.type === 'string' && parts[k + 1]!.startIndex === c.endIndex;
        out += unquoted(source.slice(at, c.startIndex)) + (translated ? '' : escapedForm(c, source));
        at = c.endIndex;
      });
      return out + unquoted(source.slice(at, node.endIndex));
    }
    default:
      // Command, process and arithmetic substitutions, and anything the grammar adds later.
      return expansion('?');
  }
}

const expansion = (name: string): string => `${OPEN}${name}${CLOSE}`;
const quote = (text: string): string => [...text].map((c) => (SPECIAL.has(c) ? `\\${c}` : c)).join('');

/** Unquoted text: a backslash quotes the next character; backslash-newline disappears. */
function unquoted(text: string): string {
  let out = '';
  for (let k = 0; k < text.length; k++) {
    const c = text[k]!;
    if (c === '\\' && k + 1 < text.length) {
      const n = text[++k]!;
      if (n !== '\n') out += quote(n);
    } else if (c === OPEN || c === CLOSE) out += quote(c);
    else out += c;
  }
  return out;
}

/** `"…"`: only `\$`, `` \` ``, `\"`, `\\` and backslash-newline are escapes. */
function doubleQuoted(node: SyntaxNode, source: string): string {
  const start = node.startIndex + (node.type === 'translated_string' ? 2 : 1);
  const end = node.endIndex - 1;
  let out = '';
  let at = start;
  const literal = (text: string): void => {
    for (let k = 0; k < text.length; k++) {
      const c = text[k]!;
      const n = text[k + 1];
      if (c === '\\' && n !== undefined && '$`"\\\n'.includes(n)) {
        k++;
        if (n !== '\n') out += quote(n);
      } else out += quote(c);
    }
  };
  for (const c of children(node)) {
    if (c.startIndex < start || c.endIndex > end) continue;
    if (c.type === 'string_content') continue;
    literal(source.slice(at, c.startIndex));
    out += escapedForm(c, source);
    at = c.endIndex;
  }
  literal(source.slice(at, end));
  return out;
}

/**
 * Where bash ends the `$'…'` string that `text` starts with (the index after its closing quote); -1 when it does not
 * end.
 */
export function ansiCEnd(text: string): number {
  for (let k = 2; k < text.length; k++) {
    if (text[k] === '\\') k++;
    else if (text[k] === "'") return k + 1;
  }
  return -1;
}

const ANSI_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/**
 * bash's `$'…'`: `\xHH`, `\uHHHH`, `\UHHHHHHHH`, octal `\NNN`, `\cX` (X's low five bits; `\c?` is DEL) and the C
 * escapes.
 */
export function decodeAnsiC(body: string): string {
  let out = '';
  for (let k = 0; k < body.length; k++) {
    const c = body[k]!;
    if (c !== '\\' || k + 1 >= body.length) {
      out += c;
      continue;
    }
    const n = body[++k]!;
    const hex = (max: number): void => {
      const m = new RegExp(`^[0-9a-fA-F]{1,${max}}`).exec(body.slice(k + 1));
      if (!m) {
        out += `\\${n}`;
        return;
      }
      out += String.fromCodePoint(parseInt(m[0], 16));
      k += m[0].length;
    };
    if (n in ANSI_ESCAPES) out += ANSI_ESCAPES[n];
    else if (n === 'x') hex(2);
    else if (n === 'u') hex(4);
    else if (n === 'U') hex(8);
    else if (/[0-7]/.test(n)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(k))!;
      out += String.fromCharCode(parseInt(m[0], 8) & 0xff);
      k += m[0].length - 1;
    } else if (n === 'c' && k + 1 < body.length) {
      // `\c\\` is control-backslash: bash takes both backslashes.
      if (body[k + 1] === '\\' && body[k + 2] === '\\') k++;
      const x = body[++k]!;
      out += x === '?' ? '\x7f' : String.fromCharCode(x.toUpperCase().charCodeAt(0) & 0x1f);
    } else out += `\\${n}`;
  }
  // A NUL ends the string there, as it ends a C string in bash.
  const nul = out.indexOf('\0');
  return nul === -1 ? out : out.slice(0, nul);
}

/** bash brace expansion on the escaped form: `{a,b}` and `{1..3}` / `{a..c}`, nested, left to right. */
export function braceExpand(e: string): string[] {
  const out: string[] = [];
  const queue = [e];
  while (queue.length && out.length + queue.length <= MAX_BRACE_WORDS) {
    const w = queue.shift()!;
    const alts = firstBrace(w);
    if (!alts) out.push(w);
    else queue.unshift(...alts);
  }
  return out.length + queue.length > MAX_BRACE_WORDS ? [...out, ...queue] : out;
}

function firstBrace(w: string): string[] | undefined {
  for (let open = 0; open < w.length; open++) {
    const c = w[open]!;
    if (c === '\\') {
      open++;
      continue;
    }
    if (c === OPEN) {
      open = w.indexOf(CLOSE, open);
      continue;
    }
    if (c !== '{') continue;
    // `${` is not a brace expansion; the escaped form has no `$` before an expansion, only literal ones.
    if (open > 0 && w[open - 1] === '$') continue;
    let depth = 0;
    const commas: number[] = [];
    for (let k = open + 1; k < w.length; k++) {
      const d = w[k]!;
      if (d === '\\') k++;
      else if (d === OPEN) k = w.indexOf(CLOSE, k);
      else if (d === '{') depth++;
      else if (d === '}' && depth > 0) depth--;
      else if (d === ',' && depth === 0) commas.push(k);
      else if (d === '}') {
        const pre = w.slice(0, open);
        const post = w.slice(k + 1);
        if (commas.length) {
          const bounds = [open, ...commas, k];
          return bounds.slice(0, -1).map((b, j) => pre + w.slice(b + 1, bounds[j + 1]) + post);
        }
        const seq = sequence(w.slice(open + 1, k));
        if (seq) return seq.map((s) => pre + s + post);
        break;
      }
    }
  }
  return undefined;
}

function sequence(body: string): string[] | undefined {
  const m = /^(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])(?:\.\.(-?\d+))?$/.exec(body);
  if (!m) return undefined;
  const num = /^-?\d+$/.test(m[1]!);
  if (num !== /^-?\d+$/.test(m[2]!)) return undefined;
  const a = num ? Number(m[1]) : m[1]!.charCodeAt(0);
  const b = num ? Number(m[2]) : m[2]!.charCodeAt(0);
  const step = Math.max(1, Math.abs(Number(m[3] ?? 1)));
  const out: string[] = [];
  for (let v = a; a <= b ? v <= b : v >= b; v += a <= b ? step : -step) {
    out.push(num ? String(v) : String.fromCharCode(v));
    if (out.length > MAX_BRACE_WORDS) break;
  }
  return out;
}

/** A word with a fixed value, as if written in single quotes. */
export function literalWord(value: string): Word {
  return {
    value,
    symbolic: value,
    glob: value.replace(/[\\*?[\]{}]/g, '\\$&'),
    hasGlob: false,
    braced: false,
    raw: value,
  };
}
