import { lex } from './shell-lex.js';
import { parseShell } from './shell-parse.js';
import { commandName } from './shell-unwrap.js';

/**
 * Deny-list patterns (§7, `security.deny_commands`). A pattern is written like a command and
 * parsed by the same tokenizer, then compared on normalized words:
 * - the command name matches case-insensitively by basename (`/usr/bin/sudo` is `sudo`);
 * - options are sets: `-rf`, `-fr`, `-r -f` and `--recursive --force` are the same for `rm`,
 *   and a pattern's options need only be a subset of the command's;
 * - operands must each match some operand of the command, after path normalization
 *   (`//`, `/.`, trailing `/`, `${HOME}`); unquoted `*`, `?` and `{a,b}` are globs,
 *   quoted ones are literal (`rm -r '/*'` means the literal word `/*`);
 * - `a | b` matches a pipeline in which a command matching `a` comes before one matching `b`,
 *   or a `b` command that runs an `a` command's output by substitution (`bash <(curl …)`).
 * Anything not of that shape (e.g. the fork bomb `:(){ :|:& };:`) is matched as a substring
 * of the command text with all whitespace removed.
 */

export interface StagePattern {
  name: RegExp;
  flags: string[];
  operands: RegExp[];
}

export type CompiledPattern =
  | { kind: 'pipeline'; source: string; stages: StagePattern[] }
  | { kind: 'text'; source: string; needle: string };

/** Long options (and short synonyms) that mean the same short option, by command. */
const OPTION_SYNONYMS: Record<string, Record<string, string>> = {
  rm: { recursive: 'r', R: 'r', force: 'f' },
  chmod: { recursive: 'R' },
  chown: { recursive: 'R' },
  chgrp: { recursive: 'R' },
  git: { force: 'f' },
  cp: { recursive: 'r', R: 'r', force: 'f' },
  kill: { KILL: '9', SIGKILL: '9' },
};

export interface ParsedArgs {
  flags: Set<string>;
  operands: string[];
}

/** Splits arguments into option letters/names (normalized per command) and operands. */
export function parseArgs(name: string, args: readonly string[]): ParsedArgs {
  const synonyms = OPTION_SYNONYMS[name] ?? {};
  const flags = new Set<string>();
  const operands: string[] = [];
  let optionsEnded = false;
  for (const a of args) {
    if (optionsEnded || a === '-' || !a.startsWith('-')) {
      operands.push(a);
    } else if (a === '--') {
      optionsEnded = true;
    } else if (a.startsWith('--')) {
      const long = a.slice(2).split('=')[0]!;
      flags.add(synonyms[long] ?? long);
    } else if (/^-[A-Z]+$/.test(a) && synonyms[a.slice(1)]) {
      flags.add(synonyms[a.slice(1)]!);
    } else {
      for (const ch of a.slice(1)) flags.add(synonyms[ch] ?? ch);
    }
  }
  return { flags, operands };
}

/** Makes equivalent spellings of a path-like word equal: `//`→`/`, `/tmp/..`→`/`, `~/`→`~`. */
export function normalizeOperand(word: string): string {
  let w = word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, '$$$1');
  if (!/^(\/|~|\$HOME)/.test(w)) return w;
  w = w.replace(/\/{2,}/g, '/');
  const lead = w.startsWith('/') ? '/' : '';
  const parts: string[] = [];
  for (const seg of w.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..' && parts.length > (lead ? 0 : 1)) parts.pop();
    else if (seg !== '..') parts.push(seg);
  }
  return lead + parts.join('/') || '/';
}

/** Compiles a glob source (quoted characters already backslash-escaped) to an anchored RegExp. */
export function globToRegExp(glob: string, flags = ''): RegExp {
  let re = '';
  let braces = 0;
  for (let k = 0; k < glob.length; k++) {
    const c = glob[k]!;
    if (c === '\\' && k + 1 < glob.length) re += escapeRe(glob[++k]!);
    else if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '{') {
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

export function compilePattern(source: string): CompiledPattern {
  const tokens = lex(source);
  const plain = tokens.every((t) => t.kind === 'word' || (t.kind === 'op' && t.op === '|'));
  const pipelines = plain ? parseShell(source) : [];
  if (pipelines.length !== 1) return { kind: 'text', source, needle: source.replace(/\s+/g, '') };
  const stages = pipelines[0]!.map((cmd): StagePattern => {
    const [first, ...rest] = cmd.words;
    const name = commandName(first!.glob).toLowerCase();
    const args = parseArgs(name, rest.map((w) => w.glob));
    return {
      name: globToRegExp(name, 'i'),
      flags: [...args.flags],
      operands: args.operands.map((o) => globToRegExp(normalizeOperand(o))),
    };
  });
  return { kind: 'pipeline', source, stages };
}

/** True when one argv (already unwrapped) matches one stage of a pattern. */
export function matchStage(stage: StagePattern, argv: readonly string[]): boolean {
  const name = commandName(argv[0] ?? '').toLowerCase();
  if (!stage.name.test(name)) return false;
  const { flags, operands } = parseArgs(name, argv.slice(1));
  if (!stage.flags.every((f) => flags.has(f))) return false;
  const normalized = operands.map(normalizeOperand);
  return stage.operands.every((re) => normalized.some((o) => re.test(o)));
}
