import type { Analysis, FoundCommand } from './analyze.js';
import { canonicalShape } from './shape.js';
import { couldMatch } from './maybe.js';
import { isFileOperand, normalizeArgs, normalizeOperand, type NormalArgs } from './options.js';
import { children, fields, type ShellParser } from './syntax.js';
import { inDir, type Cwd } from './paths.js';
import { basename } from './unwrap.js';
import { evaluateWord, type Word } from './words.js';
import { writtenBy } from './writes.js';

/**
 * Deny-list patterns (`security.deny_commands`, §7). A pattern is written like a command and
 * parsed by the same grammar, then compared on normalized arguments (options.ts):
 * - the command name is a glob against the basename, without case (`mkfs*`, `/usr/bin/sudo`);
 * - the pattern's options must all be among the command's (`rm -r /` matches `rm -rf /`);
 * - each pattern operand must match some operand of the command (unquoted `*`, `?`, `{a,b}`
 *   are globs; quoted ones literal);
 * - `a | b` matches a pipeline where an `a` command comes before a `b` command, or a `b`
 *   command (or `eval`/`source` for a shell) running an `a` command's output by substitution;
 * - any other shape (the fork bomb `:(){ :|:& };:`) matches the same syntax anywhere in the
 *   command line, function names aside — never the same characters inside a quoted string.
 */

interface StagePattern {
  name: RegExp;
  flags: string[];
  operands: RegExp[];
  /** The same operands as glob sources, to ask whether a word the gate cannot know could match (maybe.ts). */
  operandGlobs: string[];
  /** The pattern names operands beyond a subcommand (`git push --force` names none). */
  hasOperands: boolean;
}

export type DenyPattern =
  | { kind: 'pipeline'; source: string; stages: StagePattern[] }
  | { kind: 'write'; source: string; path: RegExp }
  | { kind: 'shape'; source: string; shape: string };

export interface DenyHit {
  rule: string;
  /** The simple command that matched, as the gate saw it after unwrapping. */
  command: string;
}

export function compileDenyPattern(source: string, parser: ShellParser): DenyPattern {
  // `> /dev/sd*`: any write to such a file, by redirection or by a command's own arguments.
  const write = /^\s*>\s*(\S.*)$/s.exec(source);
  if (write) return { kind: 'write', source, path: compileStage('x', write[1]!, parser).operands[0] ?? /^$/ };
  // Lists, subshells and function definitions (the fork bomb) are matched by shape.
  const stages = /[;&()<>`$]|\|\|/.test(source)
    ? undefined
    : source.split('|').map((s) => /^\s*(\S+)\s*(.*)$/s.exec(s));
  if (!stages || stages.some((m) => !m)) return { kind: 'shape', source, shape: shapeOf(source, parser) };
  return { kind: 'pipeline', source, stages: stages.map((m) => compileStage(m![1]!, m![2]!, parser)) };
}

/** One stage: the name is a glob as written (`{curl,wget}`, `mkfs*`); the rest is parsed like arguments. */
function compileStage(nameSource: string, rest: string, parser: ShellParser): StagePattern {
  const nameGlob = basename(nameSource.replace(/^(['"])(.*)\1$/, '$2')).toLowerCase();
  const parsed = parser.parse(`x ${rest}`);
  try {
    const cmd = children(parsed.root).find((c) => c.type === 'command');
    // Brace alternatives (`/dev/{sd,hd}*`) stay one glob, not several words.
    const args = cmd
      ? fields(cmd)
          .filter((f) => f.field === 'argument')
          .flatMap((f) => evaluateWord(f.node, `x ${rest}`, { braces: false }))
      : [];
    const normal = normalizeArgs(nameGlob, args);
    const operandGlobs = normal.operandWords.map((a) => normalizeGlob(a, nameGlob));
    return {
      name: globToRegExp(nameGlob, 'i'),
      // A pattern that names no signal (`kill -- -1`) matches every signal.
      flags: [...normal.flags].filter((f) => f !== 'signal=TERM' || args.some((a) => /TERM|15/i.test(a.raw))),
      operands: operandGlobs.map((g) => globToRegExp(g)),
      operandGlobs,
      hasOperands: normal.operandWords.length > (nameGlob === 'git' ? 1 : 0),
    };
  } finally {
    parsed.dispose();
  }
}

function shapeOf(source: string, parser: ShellParser): string {
  const parsed = parser.parse(source);
  try {
    return shapeBody(canonicalShape(parsed.root, source));
  } finally {
    parsed.dispose();
  }
}

/** The first rule that matches any command of the analysis. */
export function matchDeny(patterns: readonly DenyPattern[], analysis: Analysis): DenyHit | undefined {
  // Each command is looked at only by the rules whose names could match one of its levels.
  const names = anyName(patterns);
  const candidates = analysis.commands.filter((c) => c.levels.some((argv) => names.test(levelName(argv))));
  let written: { word: Word; cwd: Cwd; command: string }[] | undefined;
  for (const p of patterns) {
    if (p.kind === 'shape') {
      if (p.shape && analysis.shapes.some((s) => s.includes(p.shape))) return { rule: p.source, command: p.source };
      continue;
    }
    if (p.kind === 'write') {
      written ??= writes(analysis);
      const hit = written.find((w) => {
        const word = inDir(w.word, w.cwd);
        return word.value !== undefined && p.path.test(normalizeOperand(word));
      });
      if (hit) return { rule: p.source, command: hit.command };
      continue;
    }
    for (const cmd of candidates) {
      const hit = matchPipeline(p.stages, cmd, analysis.commands);
      if (hit) return { rule: p.source, command: hit };
    }
  }
  return undefined;
}

/**
 * A command that would match a rule if a word the gate cannot know had the right value
 * (`rm -rf $(…)`, `rm -rf "$X"/*`, `cd "$D" && rm -rf *`): the verdict is opaque. Only rules
 * with operands: a word from an expansion is how every ordinary `git push "$BRANCH"` is
 * written. `kill` is left out: its operands are process ids, in ordinary use always from
 * `$(pgrep …)` or `$!`, and `-1` there is read as a signal unless `--` or a signal precedes it.
 */
export function matchPossible(patterns: readonly DenyPattern[], analysis: Analysis): DenyHit | undefined {
  const uncertain = analysis.commands.filter(
    (c) => c.cwd === null || c.levels.some((argv) => argv.some((w) => w.value === undefined)),
  );
  if (uncertain.length === 0) return undefined;
  for (const p of patterns) {
    if (p.kind !== 'pipeline' || p.stages.length !== 1) continue;
    const stage = p.stages[0]!;
    if (!stage.hasOperands) continue;
    for (const cmd of uncertain) {
      for (const argv of cmd.levels) {
        const first = argv[0]?.value;
        if (first === undefined || (cmd.cwd !== null && argv.every((w) => w.value !== undefined))) continue;
        const name = basename(first).toLowerCase();
        if (name === 'kill' || !stage.name.test(name)) continue;
        const { flags, operands, operandWords } = normalizeArgs(name, argv.slice(1), cmd.cwd);
        const unknown = operandWords.filter((w, i) => w.value === undefined && isFileOperand(name, i));
        if (unknown.length === 0) continue;
        const operandsOk = (without?: Word): boolean =>
          stage.operandGlobs.every(
            (g, i) =>
              operands.some((o) => stage.operands[i]!.test(o)) ||
              unknown.some((w) => w !== without && couldMatch(w, g)),
          );
        // An expansion at the front of a word could be the missing options (`rm $OPTS /`); a
        // quoted one is one word, so it cannot be an operand as well.
        const ok = stage.flags.every((f) => flags.has(f))
          ? operandsOk()
          : unknown.some((w) => w.glob.startsWith('*') && operandsOk(mightSplit(w) ? undefined : w));
        if (ok) return { rule: p.source, command: text(argv) };
      }
    }
  }
  return undefined;
}

/** An unquoted expansion is split into words by the shell (`$X` may be `-r /`). */
function mightSplit(w: Word): boolean {
  return /[$`]/.test(w.raw.replace(/"(?:\\.|[^"\\])*"|'[^']*'/g, ''));
}

function matchPipeline(stages: StagePattern[], cmd: FoundCommand, all: FoundCommand[]): string | undefined {
  const last = stages[stages.length - 1]!;
  // `eval "$(curl …)"`, `source <(curl …)`: eval and source run scripts as a shell does.
  const runsScript = (argv: readonly Word[]): boolean =>
    stages.length === 2 && /^(eval|source|\.)$/.test(argv[0]?.value ?? '') && last.name.test('sh');
  const level = cmd.levels.find((argv) => matchStage(last, argv, cmd.cwd) || runsScript(argv));
  if (!level) return undefined;
  if (stages.length === 1) return text(level);
  const before = stages.slice(0, -1);
  // Earlier stages of the same pipeline, in order.
  const earlier = all
    .filter((c) => c.pipeline === cmd.pipeline && c.stage < cmd.stage)
    .sort((a, b) => a.stage - b.stage);
  let next = 0;
  for (const c of earlier) if (next < before.length && c.levels.some((argv) => matchStage(before[next]!, argv))) next++;
  if (next === before.length) return text(level);
  // `bash <(curl …)`, `sh -c "$(wget …)"`: the producer runs inside the runner's substitutions.
  if (
    stages.length === 2 &&
    all.some((c) => c.inSubstitution && c.parent === cmd && c.levels.some((argv) => matchStage(before[0]!, argv)))
  )
    return text(level);
  return undefined;
}

/** A redirection or a command's own argument (`tee F`, `cp x F`, `dd of=F`) writing a file the pattern names. */
function writes(analysis: Analysis): { word: Word; cwd: Cwd; command: string }[] {
  const out = [...analysis.writes];
  for (const cmd of analysis.commands) {
    for (const argv of cmd.levels) {
      for (const word of writtenBy(levelName(argv), argv.slice(1)))
        out.push({ word, cwd: cmd.cwd, command: text(argv) });
    }
  }
  return out;
}

const unions = new WeakMap<readonly DenyPattern[], RegExp>();

/** One RegExp for every command name the rules name (and `eval`/`source`, which run scripts as a shell does). */
function anyName(patterns: readonly DenyPattern[]): RegExp {
  let re = unions.get(patterns);
  if (!re) {
    const names = patterns.flatMap((p) => (p.kind === 'pipeline' ? p.stages.map((s) => s.name.source) : []));
    re = new RegExp([...names, '^(eval|source|\\.)$'].map((n) => `(?:${n})`).join('|'), 'i');
    unions.set(patterns, re);
  }
  return re;
}

function matchStage(stage: StagePattern, argv: readonly Word[], cwd: Cwd = undefined): boolean {
  if (argv[0]?.value === undefined) return false;
  const name = levelName(argv);
  if (!stage.name.test(name)) return false;
  const { flags, operands } = normalArgs(argv, name, cwd);
  if (!stage.flags.every((f) => flags.has(f))) return false;
  return stage.operands.every((re) => operands.some((o) => re.test(o)));
}

// One command is compared with many rules (six name `rm`): its name and normalized arguments
// are worked out once per command line, not once per rule.
const levelNames = new WeakMap<readonly Word[], string>();
const normalized = new WeakMap<readonly Word[], Map<Cwd, NormalArgs>>();

function levelName(argv: readonly Word[]): string {
  let name = levelNames.get(argv);
  if (name === undefined) levelNames.set(argv, (name = basename(argv[0]?.value ?? '').toLowerCase()));
  return name;
}

function normalArgs(argv: readonly Word[], name: string, cwd: Cwd): NormalArgs {
  let byCwd = normalized.get(argv);
  if (!byCwd) normalized.set(argv, (byCwd = new Map()));
  let normal = byCwd.get(cwd);
  if (!normal) byCwd.set(cwd, (normal = normalizeArgs(name, argv.slice(1), cwd)));
  return normal;
}

const text = (argv: readonly Word[]): string => argv.map((w) => w.value ?? w.raw).join(' ');

/** A pattern operand as a glob over normalized operands; quoted characters stay literal. */
function normalizeGlob(w: Word, name: string): string {
  if (!w.hasGlob && !/(^|[^\\])\{/.test(w.glob)) return escapeGlob(normalizeOperand(w, name));
  // Normalize the path part of an unquoted glob operand (`//*` → `/*`), keeping its wildcards.
  return w.glob.replace(/\/{2,}/g, '/').replace(/^\$HOME(?=\/|$)|^\\\$HOME(?=\/|$)/, '~');
}

const escapeGlob = (s: string): string => s.replace(/[\\*?[\]{}]/g, '\\$&');

function shapeBody(shape: string): string {
  // Drop the `(program` wrapper so the pattern matches inside a longer command line.
  return shape.replace(/^\(program /, '').replace(/ \)$/, '');
}

/** Compiles a glob source (backslash-escaped literals) to an anchored RegExp; `{a,b}` are alternatives. */
export function globToRegExp(glob: string, flags = ''): RegExp {
  let re = '';
  let braces = 0;
  for (let k = 0; k < glob.length; k++) {
    const c = glob[k]!;
    if (c === '\\' && k + 1 < glob.length) re += escapeRe(glob[++k]!);
    else if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', k + 2);
      if (end === -1) re += '\\[';
      else {
        re += `[${glob
          .slice(k + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')}]`;
        k = end;
      }
    } else if (c === '{') {
      braces++;
      re += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      re += ')';
    } else if (c === ',' && braces > 0) re += '|';
    else re += escapeRe(c);
  }
  re += ')'.repeat(braces);
  return new RegExp(`^${re}$`, flags);
}

const escapeRe = (c: string): string => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
