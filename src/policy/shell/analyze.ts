import { children, descendants, fields, type ShellParser, type SyntaxNode } from './syntax.js';
import { evaluateWord, literalWord, type Word } from './words.js';
import { COMMAND_VARIABLES } from './programs.js';
import { unwrapCommand, type Stdin } from './unwrap.js';

/**
 * Walks a parsed command line and lists every simple command bash would run, at every
 * nesting level the syntax shows: pipelines and lists, subshells and compound commands,
 * command and process substitutions, function bodies, aliases defined on the same line,
 * and the scripts handed to `sh -c`, `eval`, here-documents and wrappers (unwrap.ts).
 * Whatever cannot be decided statically is recorded as opaque, with the reason.
 */

export interface FoundCommand {
  /** The argv at each level of unwrapping, outermost first: `sudo rm -rf /` → [sudo rm -rf /], [rm -rf /]. */
  levels: Word[][];
  /** The simple command as written. */
  text: string;
  /** Pipeline it belongs to (an id) and its position there; stage 0 when not in a pipeline. */
  pipeline: number;
  stage: number;
  /** The command whose substitution, script or `-exec` contains this one. */
  parent: FoundCommand | undefined;
  /** It runs inside a command or process substitution (its output feeds the parent). */
  inSubstitution: boolean;
}

export interface OpaquePart {
  reason: string;
  command: string;
}

export interface Analysis {
  commands: FoundCommand[];
  opaque: OpaquePart[];
  /** Each parsed script's syntax in a canonical form, for deny patterns that are not simple commands. */
  shapes: string[];
}

export interface AnalyzeOptions {
  /** Expands a command name that is a pathname pattern (`/usr/bin/s?do`) against the file system. */
  expandCommandGlob?: (pattern: string) => string[];
}

/** Scripts nested deeper than this (`sh -c "sh -c '…'"`) are opaque rather than guessed at. */
const MAX_DEPTH = 8;

interface Scope {
  source: string;
  functions: Set<string>;
  aliases: Map<string, string>;
  /** Files this command line writes (redirections, `tee`, `curl -o`): running one is opaque. */
  written: Set<string>;
}

interface Ctx {
  scope: Scope;
  parent: FoundCommand | undefined;
  depth: number;
  pipeline: number;
  stage: number;
  stdin: Stdin | undefined;
  inSubstitution: boolean;
}

export function analyzeShell(command: string, parser: ShellParser, opts: AnalyzeOptions = {}): Analysis {
  const a = new Analyzer(parser, opts);
  a.script(command, undefined, 0);
  return { commands: a.commands, opaque: a.opaque, shapes: a.shapes };
}

class Analyzer {
  readonly commands: FoundCommand[] = [];
  readonly opaque: OpaquePart[] = [];
  readonly shapes: string[] = [];
  private pipelines = 0;

  constructor(
    private readonly parser: ShellParser,
    private readonly opts: AnalyzeOptions,
  ) {}

  script(source: string, parent: FoundCommand | undefined, depth: number): void {
    if (depth > MAX_DEPTH) {
      this.opaque.push({ reason: `scripts nested more than ${MAX_DEPTH} levels deep`, command: clip(source) });
      return;
    }
    const text = joinContinuations(source, this.parser);
    const parsed = this.parser.parse(text);
    try {
      const root = parsed.root;
      if (root.hasError) this.opaque.push({ reason: 'the bash grammar cannot parse it, so a shell may read it differently than the gate', command: clip(source) });
      const scope = prepass(root, text);
      this.shapes.push(canonicalShape(root, text));
      this.walk(root, { scope, parent, depth, pipeline: ++this.pipelines, stage: 0, stdin: undefined, inSubstitution: false });
    } finally {
      parsed.dispose();
    }
  }

  private walk(node: SyntaxNode, ctx: Ctx): void {
    switch (node.type) {
      case 'command':
        return this.simple(node, ctx);
      case 'comment':
        return;
      case 'pipeline': {
        const id = ++this.pipelines;
        let stage = 0;
        for (const c of children(node)) {
          if (!c.isNamed) continue;
          this.walk(c, { ...ctx, pipeline: id, stage, stdin: stage > 0 ? { kind: 'pipe' } : ctx.stdin });
          stage++;
        }
        return;
      }
      case 'redirected_statement':
        return this.redirected(node, ctx);
      case 'test_command':
        // `[ … ]` is the `[` command (a builtin); `[[ … ]]` is syntax.
        if (!node.text.startsWith('[[') && node.text.startsWith('[')) {
          this.commands.push({ levels: [testArgv(node, ctx.scope.source)], text: node.text, pipeline: ctx.pipeline, stage: ctx.stage, parent: ctx.parent, inSubstitution: ctx.inSubstitution });
        }
        break;
      case 'variable_assignment':
        this.assignment(node, ctx);
        break;
      case 'command_substitution':
      case 'process_substitution':
        // Runs in a subshell of its own: not part of the enclosing pipeline, stdin not redirected.
        for (const c of children(node)) this.walk(c, { ...ctx, pipeline: ++this.pipelines, stage: 0, stdin: undefined, inSubstitution: true });
        return;
    }
    for (const c of children(node)) this.walk(c, ctx);
  }

  /** `cmd <<EOF … | next`: the here-document is cmd's stdin; what follows `|` reads cmd's output. */
  private redirected(node: SyntaxNode, ctx: Ctx): void {
    let stdin = ctx.stdin;
    for (const { field, node: r } of fields(node)) {
      if (field !== 'redirect') continue;
      if (r.type === 'heredoc_redirect') stdin = heredocText(r, ctx.scope.source);
      if (r.type === 'herestring_redirect') stdin = hereString(r, ctx.scope.source);
      if (r.type === 'file_redirect' && /^\d*<$/.test(operator(r))) stdin = { kind: 'file', word: destination(r, ctx.scope.source) };
    }
    for (const { field, node: c } of fields(node)) {
      if (field === 'body') this.walk(c, { ...ctx, stdin });
      else if (c.type === 'heredoc_redirect') {
        let prevEnd = c.startIndex;
        for (const part of children(c)) {
          if (!part.isNamed || ['heredoc_start', 'heredoc_end'].includes(part.type)) {
            prevEnd = part.endIndex;
            continue;
          }
          // `cat <<E | sh`: the grammar hangs the rest of the pipeline under the here-document.
          const between = ctx.scope.source.slice(prevEnd, part.startIndex);
          const piped = /\|(?!\|)/.test(between.replace(/\|\|/g, '')) || (part.type === 'pipeline' && /^\s*\|/.test(ctx.scope.source.slice(prevEnd)));
          this.walk(part, piped && part.type !== 'heredoc_body' ? { ...ctx, stage: ctx.stage + 1, stdin: { kind: 'pipe' } } : ctx);
          prevEnd = part.endIndex;
        }
      } else this.walk(c, ctx);
    }
  }

  private assignment(node: SyntaxNode, _ctx: Ctx): void {
    const name = children(node).find((c) => c.type === 'variable_name')?.text ?? '';
    if (COMMAND_VARIABLES.has(name)) this.opaque.push({ reason: `it sets ${name}, whose value programs run as a command`, command: clip(node.text) });
  }

  private simple(node: SyntaxNode, ctx: Ctx): void {
    const { source } = ctx.scope;
    const argv: Word[] = [];
    let stdin = ctx.stdin;
    for (const { field, node: c } of fields(node)) {
      if (field === 'name') argv.push(...evaluateWord(c.child(0) ?? c, source));
      else if (field === 'argument') argv.push(...evaluateWord(c, source));
      else if (c.type === 'herestring_redirect') stdin = hereString(c, source);
      else if (c.type === 'file_redirect' && /^\d*<$/.test(operator(c))) stdin = { kind: 'file', word: destination(c, source) };
    }
    const found: FoundCommand = { levels: [], text: node.text, pipeline: ctx.pipeline, stage: ctx.stage, parent: ctx.parent, inSubstitution: ctx.inSubstitution };
    this.commands.push(found);
    if (argv.length) this.unwrap(found, argv, ctx, stdin);
    // Substitutions inside the words and redirections, and prefix assignments.
    const inner: Ctx = { ...ctx, parent: found, stdin: undefined, inSubstitution: false };
    for (const c of children(node)) this.walk(c, inner);
  }

  private unwrap(found: FoundCommand, argv: Word[], ctx: Ctx, stdin: Stdin | undefined): void {
    const { scope } = ctx;
    unwrapCommand(found, argv, stdin, {
      opaque: (reason) => this.opaque.push({ reason, command: clip(found.text) }),
      script: (text) => this.script(text, found, ctx.depth + 1),
      nested: (inner) => {
        const child: FoundCommand = { levels: [], text: inner.map((w) => w.raw).join(' '), pipeline: ++this.pipelines, stage: 0, parent: found, inSubstitution: false };
        this.commands.push(child);
        this.unwrap(child, inner, { ...ctx, parent: found }, undefined);
      },
      isFunction: (name) => scope.functions.has(name),
      alias: (name) => scope.aliases.get(name),
      written: (path) => scope.written.has(normalizePath(path)),
      expandCommandGlob: this.opts.expandCommandGlob,
    });
  }
}

export type { Stdin };

const WORDISH = new Set(['word', 'string', 'raw_string', 'ansi_c_string', 'translated_string', 'number', 'simple_expansion', 'expansion', 'command_substitution', 'process_substitution', 'arithmetic_expansion', 'concatenation']);

/** The argv of `[ -f x ]`: word nodes whole, operators and brackets as literal words. */
function testArgv(node: SyntaxNode, source: string): Word[] {
  const out: Word[] = [];
  const visit = (n: SyntaxNode): void => {
    if (WORDISH.has(n.type)) out.push(...evaluateWord(n, source));
    else if (n.childCount === 0) out.push(literalWord(n.text));
    else children(n).forEach(visit);
  };
  visit(node);
  return out;
}

/** Here-document text as the shell hands it over; undefined text when it has expansions. */
function heredocText(r: SyntaxNode, source: string): Stdin {
  const start = children(r).find((c) => c.type === 'heredoc_start')?.text ?? '';
  const body = children(r).find((c) => c.type === 'heredoc_body');
  if (!body) return { kind: 'text', text: '' };
  const quoted = /['"\\]/.test(start);
  if (quoted) return { kind: 'text', text: body.text };
  if (children(body).some((c) => c.isNamed && c.type !== 'heredoc_content')) return { kind: 'text', text: undefined };
  return { kind: 'text', text: body.text.replace(/\\\n/g, '').replace(/\\([$`\\])/g, '$1') };
  void source;
}

function hereString(r: SyntaxNode, source: string): Stdin {
  const word = children(r).find((c) => c.isNamed);
  if (!word) return { kind: 'text', text: '' };
  const words = evaluateWord(word, source);
  return { kind: 'text', text: words.length === 1 ? words[0]!.value : undefined };
}

function operator(r: SyntaxNode): string {
  return children(r).filter((c) => !c.isNamed).map((c) => c.type).join('');
}

function destination(r: SyntaxNode, source: string): Word | undefined {
  const d = fields(r).find((f) => f.field === 'destination');
  return d ? evaluateWord(d.node, source)[0] : undefined;
}

/** Function names, aliases and written files of one script, known before its commands run. */
function prepass(root: SyntaxNode, source: string): Scope {
  const scope: Scope = { source, functions: new Set(), aliases: new Map(), written: new Set() };
  for (const n of descendants(root)) {
    if (n.type === 'function_definition') {
      const name = fields(n).find((f) => f.field === 'name');
      if (name) scope.functions.add(name.node.text);
    } else if (n.type === 'file_redirect' && operator(n).includes('>')) {
      const d = destination(n, source)?.value;
      if (d) scope.written.add(normalizePath(d));
    } else if (n.type === 'command') {
      const words = fields(n).filter((f) => f.field === 'name' || f.field === 'argument').flatMap((f) => evaluateWord(f.field === 'name' ? (f.node.child(0) ?? f.node) : f.node, source));
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
          if (a && /^(-o|-O|--output|--output-document)$/.test(a) && args[k + 1]) scope.written.add(normalizePath(args[k + 1]!));
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
function joinContinuations(source: string, parser: ShellParser): string {
  if (!source.includes('\\\n')) return source;
  const kept: [number, number][] = [];
  const parsed = parser.parse(source);
  try {
    for (const n of descendants(parsed.root)) {
      if (n.type === 'raw_string' || n.type === 'ansi_c_string' || n.type === 'comment') kept.push([n.startIndex, n.endIndex]);
      if (n.type === 'heredoc_redirect' && /['"\\]/.test(children(n).find((c) => c.type === 'heredoc_start')?.text ?? '')) {
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

/** Node types and literal words, whitespace-free, function names numbered: for structural deny patterns. */
export function canonicalShape(root: SyntaxNode, source: string): string {
  const names = new Map<string, string>();
  for (const n of descendants(root)) {
    if (n.type === 'function_definition') {
      const name = fields(n).find((f) => f.field === 'name')?.node.text;
      if (name && !names.has(name)) names.set(name, `F${names.size}`);
    }
  }
  const out: string[] = [];
  const visit = (n: SyntaxNode): void => {
    if (n.type === 'comment') return;
    if (n.childCount === 0 || n.type === 'word' || n.type === 'raw_string') {
      const text = n.text;
      out.push(names.get(text) ?? (n.isNamed ? `${n.type}:${text}` : text));
      return;
    }
    out.push(`(${n.type}`);
    for (const c of children(n)) visit(c);
    out.push(')');
  };
  visit(root);
  void source;
  return out.join(' ');
}

const clip = (s: string): string => (s.length > 200 ? `${s.slice(0, 200)}…` : s);
