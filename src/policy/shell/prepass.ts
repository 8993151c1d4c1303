import { children, descendants, fields, type ShellParser, type SyntaxNode } from './syntax.js';
import type { Stdin } from './unwrap.js';
import { ansiCEnd, evaluateWord, type Word } from './words.js';

/**
 * What the analyzer knows of one script before it walks it: the text as bash reads it
 * (backslash-newline joined), its functions, aliases and the files it writes; and how
 * redirections and here-documents read.
 */

export interface Scope {
  source: string;
  functions: Set<string>;
  aliases: Map<string, string>;
  /** Files this command line writes (redirections, `tee`, `curl -o`): running one is opaque. */
  written: Set<string>;
  /** Where the grammar reads the text otherwise than bash (`misreading`), said for the person. */
  misread: string | undefined;
}

export function heredocText(r: SyntaxNode, source: string): Stdin {
  const start = children(r).find((c) => c.type === 'heredoc_start')?.text ?? '';
  const body = children(r).find((c) => c.type === 'heredoc_body');
  if (!body) return { kind: 'text', text: '' };
  const quoted = /['"\\]/.test(start);
  if (quoted) return { kind: 'text', text: body.text };
  if (children(body).some((c) => c.isNamed && c.type !== 'heredoc_content')) return { kind: 'text', text: undefined };
  return { kind: 'text', text: body.text.replace(/\\\n/g, '').replace(/\\([$`\\])/g, '$1') };
  void source;
}

export function hereString(r: SyntaxNode, source: string): Stdin {
  const word = children(r).find((c) => c.isNamed);
  if (!word) return { kind: 'text', text: '' };
  const words = evaluateWord(word, source);
  return { kind: 'text', text: words.length === 1 ? words[0]!.value : undefined };
}

export function operator(r: SyntaxNode): string {
  return children(r)
    .filter((c) => !c.isNamed)
    .map((c) => c.type)
    .join('');
}

export function destination(r: SyntaxNode, source: string): Word | undefined {
  const d = fields(r).find((f) => f.field === 'destination');
  return d ? evaluateWord(d.node, source)[0] : undefined;
}

/**
 * Spellings the grammar reads otherwise than bash, found by the differential fuzz test
 * (test/policy/shell/fuzz.unit.test.ts): a `$'…'` string it ends past bash's end (words.ts
 * `ansiCEnd`); text between a command's words that is neither blank nor a line continuation
 * (it drops the escaped character after a quoted string: `"x"\ y` is one word to bash, two
 * to the grammar); two backquoted substitutions side by side, which it reads as one.
 */
function misreading(n: SyntaxNode, source: string): string | undefined {
  if (n.type === 'ansi_c_string' && ansiCEnd(n.text) !== n.text.length)
    return `the bash grammar ends ${n.text} where bash does not`;
  if (n.type === '``') return 'the bash grammar reads two backquoted substitutions side by side as one';
  if (n.type !== 'command') return undefined;
  const parts = children(n);
  for (let k = 1; k < parts.length; k++) {
    const gap = source.slice(parts[k - 1]!.endIndex, parts[k]!.startIndex);
    if (!/^(?:[ \t]|\\\n)*$/.test(gap)) return `the bash grammar drops ${JSON.stringify(gap.trim())} between two words`;
  }
  // A backslash right after the command's last word belongs to that word in bash.
  if (source[n.endIndex] === '\\' && source[n.endIndex + 1] !== '\n')
    return 'the bash grammar drops the escaped character after a word';
  return undefined;
}

/** Any spelling of the names prepass reads (`a''lias`, `\\tee`); anything else cannot be one of them. */
const PREPASS_NAMES = /alias|tee|curl|wget|[$`*?[{]/;

/** Function names, aliases and written files of one script, known before its commands run. */
export function prepass(root: SyntaxNode, source: string): Scope {
  const scope: Scope = { source, functions: new Set(), aliases: new Map(), written: new Set(), misread: undefined };
  for (const n of descendants(root)) {
    scope.misread ??= misreading(n, source);
    if (n.type === 'function_definition') {
      const name = fields(n).find((f) => f.field === 'name');
      if (name) scope.functions.add(name.node.text);
    } else if (n.type === 'file_redirect' && operator(n).includes('>')) {
      const d = destination(n, source)?.value;
      if (d) scope.written.add(normalizePath(d));
    } else if (n.type === 'command') {
      // Only three names matter here: the words of every other command are not evaluated twice.
      const parts = fields(n).filter((f) => f.field === 'name' || f.field === 'argument');
      const head = parts[0]?.node.text.replace(/^.*\//, '').replace(/['"\\]/g, '');
      if (head !== undefined && !PREPASS_NAMES.test(head)) continue;
      const words = parts.flatMap((f) =>
        evaluateWord(f.field === 'name' ? (f.node.child(0) ?? f.node) : f.node, source),
      );
      const name = words[0]?.value?.replace(/^.*\//, '');
      const args = words.slice(1).map((w) => w.value);
      if (name === 'alias') {
        for (const a of args) {
          const m = a === undefined ? null : /^([^=\s]+)=(.*)$/s.exec(a);
          if (m) scope.aliases.set(m[1]!, m[2]!);
        }
      } else if (name === 'tee') {
        for (const a of args) if (a && !a.startsWith('-')) scope.written.add(normalizePath(a));
      } else if (name === 'curl' || name === 'wget') {
        args.forEach((a, k) => {
          if (a && /^(-o|-O|--output|--output-document)$/.test(a) && args[k + 1])
            scope.written.add(normalizePath(args[k + 1]!));
          const eq = a && /^(?:--output|--output-document)=(.+)$/.exec(a);
          if (eq) scope.written.add(normalizePath(eq[1]!));
        });
      }
    }
  }
  return scope;
}

export function normalizePath(p: string): string {
  return p.replace(/^(\.\/)+/, '').replace(/\/{2,}/g, '/');
}

/**
 * Backslash-newline joins lines everywhere except inside single quotes, comments and quoted
 * here-documents; the grammar reads it as a word break (`su\⏎do` is one word to bash). The
 * joined text is what bash parses, so it is what the gate parses.
 */
export function joinContinuations(source: string, parser: ShellParser): string {
  if (!source.includes('\\\n')) return source;
  const kept: [number, number][] = [];
  const parsed = parser.parse(source);
  try {
    for (const n of descendants(parsed.root)) {
      if (n.type === 'raw_string' || n.type === 'ansi_c_string' || n.type === 'comment')
        kept.push([n.startIndex, n.endIndex]);
      if (
        n.type === 'heredoc_redirect' &&
        /['"\\]/.test(children(n).find((c) => c.type === 'heredoc_start')?.text ?? '')
      ) {
        const body = children(n).find((c) => c.type === 'heredoc_body');
        if (body) kept.push([body.startIndex, body.endIndex]);
      }
    }
  } finally {
    parsed.dispose();
  }
  let out = '';
  for (let k = 0; k < source.length; k++) {
    const c = source[k]!;
    if (c === '\\' && source[k + 1] === '\n' && !kept.some(([a, b]) => k >= a && k < b)) {
      k++;
      continue;
    }
    out += c;
    // An escaped backslash is not the start of a continuation.
    if (c === '\\' && k + 1 < source.length) out += source[++k];
  }
  return out;
}
