import { children, fields, type ShellParser, type SyntaxNode } from './syntax.js';
import { evaluateWord, literalWord, type Word } from './words.js';
import { COMMAND_VARIABLES } from './programs.js';
import { basename, unwrapCommand, type Stdin } from './unwrap.js';
import { DirState } from './dirs.js';
import { fileKey, type Cwd } from './paths.js';
import {
  destination,
  heredocText,
  hereString,
  joinContinuations,
  normalizePath,
  operator,
  prepass,
  type Scope,
} from './prepass.js';
import { canonicalShape } from './shape.js';
import { WordJoiner } from './join-words.js';
import { made } from './writes.js';
import { gitAliasDefinition } from './git.js';

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
  /** The directory it runs in (paths.ts). */
  cwd: Cwd;
}

/** A file some command line redirection writes (`> F`, `>> F`, `&> F`, `<> F`), in the directory it runs in. */
export interface Write {
  word: Word;
  cwd: Cwd;
  command: string;
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
  /** Files written by redirection. */
  writes: Write[];
}

export interface AnalyzeOptions {
  /** Expands a command name that is a pathname pattern (`/usr/bin/s?do`) against the file system. */
  expandCommandGlob?: (pattern: string) => string[];
}

/** Scripts nested deeper than this (`sh -c "sh -c '…'"`) are opaque rather than guessed at. */
const MAX_DEPTH = 8;

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
  return { commands: a.commands, opaque: a.opaque, shapes: a.shapes, writes: a.writes };
}

class Analyzer {
  readonly commands: FoundCommand[] = [];
  readonly opaque: OpaquePart[] = [];
  readonly shapes: string[] = [];
  readonly writes: Write[] = [];
  private pipelines = 0;
  /** Files this line made as copies of or links to others, by normalized path; `undefined` from an unknown file. */
  private readonly madeFiles = new Map<string, Word | undefined>();
  /** `git config alias.NAME VALUE` run earlier on the line. */
  private readonly gitAliases = new Map<string, string>();
  /** The directory each command runs in, as `cd`, `pushd` and `popd` move it. */
  private dirs = new DirState();

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
      if (root.hasError)
        this.opaque.push({
          reason: 'the bash grammar cannot parse it, so a shell may read it differently than the gate',
          command: clip(source),
        });
      const scope = prepass(root, text);
      if (scope.misread !== undefined)
        this.opaque.push({
          reason: `${clip(scope.misread)}, so bash reads the line differently`,
          command: clip(source),
        });
      this.shapes.push(canonicalShape(root, text));
      // A script another program runs (`sh -c`, `eval` too, for simplicity) moves no directory of ours.
      this.inSubshell(() =>
        this.walk(root, {
          scope,
          parent,
          depth,
          pipeline: ++this.pipelines,
          stage: 0,
          stdin: undefined,
          inSubstitution: false,
        }),
      );
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
          // Each stage of a pipeline runs in a subshell of its own.
          const at = stage;
          this.inSubshell(() =>
            this.walk(c, { ...ctx, pipeline: id, stage: at, stdin: at > 0 ? { kind: 'pipe' } : ctx.stdin }),
          );
          stage++;
        }
        return;
      }
      case 'subshell':
        return this.inSubshell(() => children(node).forEach((c) => this.walk(c, ctx)));
      case 'file_redirect':
        this.redirect(node, ctx);
        break;
      case 'redirected_statement':
        return this.redirected(node, ctx);
      case 'test_command':
        // `[ … ]` is the `[` command (a builtin); `[[ … ]]` is syntax.
        if (!node.text.startsWith('[[') && node.text.startsWith('[')) {
          this.commands.push({
            levels: [testArgv(node, ctx.scope.source)],
            text: node.text,
            pipeline: ctx.pipeline,
            stage: ctx.stage,
            parent: ctx.parent,
            inSubstitution: ctx.inSubstitution,
            cwd: this.dirs.cwd,
          });
        }
        break;
      case 'variable_assignment':
        this.assignment(node, ctx);
        break;
      case 'command_substitution':
      case 'process_substitution':
        // Runs in a subshell of its own: not part of the enclosing pipeline, stdin not redirected.
        this.inSubshell(() => {
          for (const c of children(node))
            this.walk(c, { ...ctx, pipeline: ++this.pipelines, stage: 0, stdin: undefined, inSubstitution: true });
        });
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
      if (r.type === 'file_redirect' && /^\d*<$/.test(operator(r)))
        stdin = { kind: 'file', word: destination(r, ctx.scope.source) };
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
          const piped =
            /\|(?!\|)/.test(between.replace(/\|\|/g, '')) ||
            (part.type === 'pipeline' && /^\s*\|/.test(ctx.scope.source.slice(prevEnd)));
          this.walk(
            part,
            piped && part.type !== 'heredoc_body' ? { ...ctx, stage: ctx.stage + 1, stdin: { kind: 'pipe' } } : ctx,
          );
          prevEnd = part.endIndex;
        }
      } else this.walk(c, ctx);
    }
  }

  private inSubshell(run: () => void): void {
    const saved = this.dirs;
    this.dirs = saved.copy();
    try {
      run();
    } finally {
      this.dirs = saved;
    }
  }

  /** `> F`, `>> F`, `>| F`, `&> F`, `<> F` write F; `>&2`, `2>&1` only duplicate a descriptor. */
  private redirect(node: SyntaxNode, ctx: Ctx): void {
    const op = operator(node);
    if (!/>/.test(op)) return;
    const dest = destination(node, ctx.scope.source);
    if (!dest || (op.endsWith('>&') && /^(\d+|-)$/.test(dest.value ?? ''))) return;
    this.writes.push({ word: dest, cwd: this.dirs.cwd, command: clip(node.text) });
  }

  private assignment(node: SyntaxNode, _ctx: Ctx): void {
    const name = children(node).find((c) => c.type === 'variable_name')?.text ?? '';
    if (COMMAND_VARIABLES.has(name))
      this.opaque.push({ reason: `it sets ${name}, whose value programs run as a command`, command: clip(node.text) });
  }

  private simple(node: SyntaxNode, ctx: Ctx): void {
    const { source } = ctx.scope;
    const words = new WordJoiner(source, (reason) => this.opaque.push({ reason, command: clip(node.text) }));
    let stdin = ctx.stdin;
    for (const { field, node: c } of fields(node)) {
      if (field === 'name' || field === 'argument') words.add(c, field === 'name' ? (c.child(0) ?? c) : c);
      else words.skip(c);
      if (c.type === 'herestring_redirect') stdin = hereString(c, source);
      else if (c.type === 'file_redirect' && /^\d*<$/.test(operator(c)))
        stdin = { kind: 'file', word: destination(c, source) };
    }
    const argv = words.words;
    const found: FoundCommand = {
      levels: [],
      text: node.text,
      pipeline: ctx.pipeline,
      stage: ctx.stage,
      parent: ctx.parent,
      inSubstitution: ctx.inSubstitution,
      cwd: this.dirs.cwd,
    };
    this.commands.push(found);
    if (argv.length) this.unwrap(found, argv, ctx, stdin);
    this.afterRun(found);
    // Substitutions inside the words and redirections, and prefix assignments.
    const inner: Ctx = { ...ctx, parent: found, stdin: undefined, inSubstitution: false };
    for (const c of children(node)) this.walk(c, inner);
  }

  /** What a command changes for the ones after it: the directory, and programs copied under new names. */
  private afterRun(found: FoundCommand): void {
    for (const level of found.levels) {
      const name = basename(level[0]?.value ?? '').toLowerCase();
      const args = level.slice(1);
      if (level === found.levels.at(-1)) this.dirs.apply(name, args);
      const alias = name === 'git' ? gitAliasDefinition(args.map((w) => w.value)) : undefined;
      if (alias) this.gitAliases.set(alias[0], alias[1]);
      for (const m of made(name, args)) {
        const path = fileKey(m.path, found.cwd);
        if (path === undefined) continue;
        // A copy of a copy is still the first program.
        const from =
          m.from.value === undefined ? undefined : (this.madeFiles.get(fileKey(m.from, found.cwd) ?? '') ?? m.from);
        this.madeFiles.set(path, from);
      }
    }
  }

  /** The program a command name runs when this line made that file from another (`ln -s /usr/bin/sudo s`). */
  private madeFrom(name: string, cwd: Cwd): Word | null | undefined {
    if (this.madeFiles.size === 0) return undefined;
    // A bare name is found on PATH, which may hold the directory the file was made in.
    const key = name.includes('/') ? fileKey(literalWord(name), cwd) : undefined;
    for (const [path, from] of this.madeFiles) {
      if (key !== undefined ? path === key : basename(path) === name) return from ?? null;
    }
    return undefined;
  }

  private unwrap(found: FoundCommand, argv: Word[], ctx: Ctx, stdin: Stdin | undefined): void {
    const { scope } = ctx;
    unwrapCommand(found, argv, stdin, {
      opaque: (reason) => this.opaque.push({ reason, command: clip(found.text) }),
      script: (text) => this.script(text, found, ctx.depth + 1),
      nested: (inner) => {
        const child: FoundCommand = {
          levels: [],
          text: inner.map((w) => w.raw).join(' '),
          pipeline: ++this.pipelines,
          stage: 0,
          parent: found,
          inSubstitution: false,
          cwd: found.cwd,
        };
        this.commands.push(child);
        this.unwrap(child, inner, { ...ctx, parent: found }, undefined);
      },
      isFunction: (name) => scope.functions.has(name),
      alias: (name) => scope.aliases.get(name),
      written: (path) => scope.written.has(normalizePath(path)),
      madeFrom: (name) => this.madeFrom(name, found.cwd),
      gitAlias: (name) => this.gitAliases.get(name),
      expandCommandGlob: this.opts.expandCommandGlob,
    });
  }
}

export type { Stdin };

const WORDISH = new Set([
  'word',
  'string',
  'raw_string',
  'ansi_c_string',
  'translated_string',
  'number',
  'simple_expansion',
  'expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
  'concatenation',
]);

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
const clip = (s: string): string => (s.length > 200 ? `${s.slice(0, 200)}…` : s);
