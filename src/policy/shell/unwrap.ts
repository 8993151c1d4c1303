import { literalWord as literal, type Word } from './words.js';
import { COMMAND_VARIABLES, SHELLS, interpreterKey } from './programs.js';
import { MULTICALL, WRAPPERS, type WrapperSpec } from './wrappers.js';
import { expandGitAlias, gitOpaqueReason } from './git.js';
import {
  awk,
  find,
  gitScripts,
  interpreter,
  quoteWord,
  readsCode,
  runsFile,
  sed,
  shell,
  sshOptions,
} from './runners.js';

/**
 * One simple command's argv → each command it really runs (§7): wrappers are skipped with
 * their own options, shells and `eval` hand their literal script back to be parsed, and
 * whatever runs text the gate cannot see (inline interpreter code, input from a pipe, a
 * command name from an expansion) is reported as opaque.
 */

/** Where a command's standard input comes from, as far as the syntax shows. */
export type Stdin =
  { kind: 'pipe' } | { kind: 'text'; text: string | undefined } | { kind: 'file'; word: Word | undefined };

export interface UnwrapSink {
  opaque(reason: string): void;
  /** A literal script this command runs (`sh -c '…'`, `eval …`, a here-document fed to a shell). */
  script(text: string): void;
  /** A command this one runs with an argv of its own (`find -exec …`). */
  nested(argv: Word[]): void;
  isFunction(name: string): boolean;
  alias(name: string): string | undefined;
  /** A git alias this command line defined with `git config alias.NAME VALUE`. */
  gitAlias(name: string): string | undefined;
  /** True when the command line itself writes this file. */
  written(path: string): boolean;
  /** The file a path or name was copied or linked from on this line; null when from one the gate cannot know. */
  madeFrom(name: string): Word | null | undefined;
  expandCommandGlob: ((pattern: string) => string[]) | undefined;
}

export interface Levels {
  levels: Word[][];
}

const MAX_STEPS = 32;

export function unwrapCommand(found: Levels, argv: Word[], stdin: Stdin | undefined, sink: UnwrapSink): void {
  let cur: Word[] | undefined = argv;
  for (let steps = 0; cur && cur.length > 0 && steps < MAX_STEPS; steps++) {
    found.levels.push(cur);
    const first: Word = cur[0]!;
    if (first.value === undefined) {
      sink.opaque(`the command name comes from an expansion (${first.raw})`);
      return;
    }
    if (first.hasGlob) {
      sink.opaque(`the command name is a pathname pattern (${first.raw})`);
      // The shell runs the first match: each possible match is checked as if written out.
      for (const match of sink.expandCommandGlob?.(first.value) ?? [])
        found.levels.push([{ ...first, value: match, symbolic: match, glob: match, hasGlob: false }, ...cur.slice(1)]);
    }
    const name = basename(first.value);
    const alias = sink.alias(name);
    if (alias !== undefined) {
      sink.script([alias, ...cur.slice(1).map((w) => w.raw)].join(' '));
      return;
    }
    if (sink.isFunction(name)) return;
    // `ln -s /usr/bin/sudo s; ./s id` runs sudo.
    const from = sink.madeFrom(first.value);
    if (from === null) {
      sink.opaque(`${first.raw} is a copy or link this command line made of a file named by an expansion`);
      return;
    }
    if (from !== undefined && from.value !== first.value) {
      cur = [{ ...from, raw: first.raw }, ...cur.slice(1)];
      continue;
    }
    cur = step(name.toLowerCase(), cur.slice(1), stdin, sink, found);
    // A wrapper's command reads the same stdin as the wrapper.
  }
}

export const basename = (p: string): string => p.slice(p.lastIndexOf('/') + 1);

function step(
  name: string,
  args: Word[],
  stdin: Stdin | undefined,
  sink: UnwrapSink,
  found: Levels,
): Word[] | undefined {
  if (name === 'env') return env(args, sink);
  if (MULTICALL.has(name)) return args[0]?.value?.startsWith('-') ? undefined : args;
  if (name === 'command' && args.some((a) => /^-[a-zA-Z]*[vV]/.test(a.value ?? ''))) return undefined;
  if (name === 'exec' && args.length === 0) return undefined;
  const wrapper = WRAPPERS[name];
  if (wrapper) return wrap(name, wrapper, args, sink);
  if (SHELLS.has(name)) return shell(name, args, stdin, sink);
  if (name === 'eval') {
    if (args.every((a) => a.value !== undefined)) sink.script(args.map((a) => a.value).join(' '));
    else sink.opaque('eval runs text built by an expansion');
    return undefined;
  }
  if (name === 'source' || name === '.') {
    if (args[0]) runsFile(args[0], name, sink);
    return undefined;
  }
  if (name === 'trap') {
    const action = args[0];
    if (action && !/^-[lp]/.test(action.value ?? '')) {
      if (action.value === undefined) sink.opaque('trap runs text built by an expansion');
      else if (action.value !== '-' && !/^\d+$/.test(action.value)) sink.script(action.value);
    }
    return undefined;
  }
  if (name === 'at' || name === 'batch') {
    readsCode(stdin, name, true, sink);
    return undefined;
  }
  if (
    (name === 'enable' && args.some((a) => /^-[a-zA-Z]*f/.test(a.value ?? ''))) ||
    (name === 'hash' && args.some((a) => a.value === '-p'))
  ) {
    sink.opaque(`${name} changes which program a name runs`);
    return undefined;
  }
  const interp = interpreterKey(name);
  if (interp) return interpreter(name, interp, args, stdin, sink);
  if (['awk', 'gawk', 'mawk', 'nawk'].includes(name)) return awk(args, sink);
  if (name === 'sed' || name === 'gsed') return sed(args, sink);
  if (name === 'find') return find(args, sink, found);
  if (name === 'git') {
    const why = gitOpaqueReason(args);
    if (why) sink.opaque(why);
    if (why === undefined) gitScripts(args, sink);
    // `git -c alias.p='push --force' p` runs `git push --force`.
    const alias = expandGitAlias(args, sink.gitAlias);
    if (alias === null) sink.opaque('git runs an alias whose value comes from the environment');
    return alias ? [literal('git'), ...alias] : undefined;
  }
  if (['ssh', 'scp', 'sftp'].includes(name)) return sshOptions(args, sink);
  if (name === 'rsync') {
    args.forEach((a, k) => {
      const v = /^(?:-e|--rsh)$/.test(a.value ?? '') ? args[k + 1]?.value : /^--rsh=(.*)$/s.exec(a.value ?? '')?.[1];
      if (v !== undefined && (!/^ssh(\s|$)/.test(v) || /proxycommand|localcommand/i.test(v)))
        sink.opaque('rsync -e runs its value as a command');
    });
    return undefined;
  }
  if (name === 'tar' || name === 'bsdtar' || name === 'gtar') {
    if (
      args.some(
        (a) =>
          /^--(checkpoint-action=exec|to-command|info-script|new-volume-script)/.test(a.value ?? '') ||
          (a.value !== undefined &&
            /^(-I|--use-compress-program=?)$/.test(a.value) === false &&
            /^--use-compress-program=.*\s/.test(a.value)),
      )
    ) {
      sink.opaque(`${name} runs a command given in its options`);
    }
    return undefined;
  }
  if (['vim', 'vi', 'nvim', 'ex', 'view', 'vimdiff', 'gvim', 'rvim'].includes(name)) {
    if (
      args.some(
        (a, k) =>
          (/^(-c|--cmd|-S)$/.test(a.value ?? '') && args[k + 1] !== undefined) || /^\+(?!\d*$)/.test(a.value ?? ''),
      )
    )
      sink.opaque(`${name} runs editor commands given on its command line`);
    return undefined;
  }
  if (name === 'man' && args.some((a) => /^(-P|--pager|-H|--html)/.test(a.value ?? ''))) {
    sink.opaque('man -P runs its value as a pager command');
    return undefined;
  }
  return undefined;
}

/** `env [-i] [-u NAME] [NAME=value]… [-S 'cmd args'] cmd args`. */
function env(args: Word[], sink: UnwrapSink): Word[] | undefined {
  const spec = WRAPPERS.env!;
  let k = 0;
  while (k < args.length) {
    const a = args[k]!.value;
    if (a === undefined) {
      sink.opaque('env options built by an expansion');
      return undefined;
    }
    const split = /^(?:-S|--split-string=?)(.*)$/s.exec(a) ?? /^-[i0v]+S(.*)$/s.exec(a);
    if (split) {
      const text = split[1] ? split[1] : args[k + 1]?.value;
      const rest = args.slice(split[1] ? k + 1 : k + 2);
      if (text === undefined || rest.some((w) => w.value === undefined))
        sink.opaque('env -S splits text built by an expansion');
      else sink.script([text, ...rest.map((w) => quoteWord(w.value!))].join(' '));
      return undefined;
    }
    if (a === '--') {
      k++;
      break;
    }
    if (a === '-') {
      k++;
      continue;
    }
    const assign = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(a);
    if (assign) {
      if (COMMAND_VARIABLES.has(assign[1]!)) sink.opaque(`it sets ${assign[1]}, whose value programs run as a command`);
      k++;
      continue;
    }
    if (!a.startsWith('-')) break;
    const skip = optionWidth(a, args[k + 1], spec);
    if (skip === undefined) {
      sink.opaque(`env option ${a} is not one the gate knows`);
      return undefined;
    }
    k += skip;
  }
  return args.slice(k);
}

/**
 * How many words an option takes (1 or 2); undefined for an option the table does not know.
 * Short clusters end at the first letter that takes a value (`-n10`, `-fn 10`).
 */
function optionWidth(a: string, next: Word | undefined, spec: WrapperSpec): number | undefined {
  if (a.startsWith('--')) {
    const name = a.split('=')[0]!;
    if (spec.long?.includes(name)) return a.includes('=') ? 1 : 2;
    if (spec.longFlags?.includes(name) || spec.flags === '*') return 1;
    return undefined;
  }
  const letters = a.slice(1);
  for (let i = 0; i < letters.length; i++) {
    const ch = letters[i]!;
    if (spec.valued.includes(ch)) return i === letters.length - 1 ? (next ? 2 : 1) : 1;
    if (!spec.flags.includes(ch) && spec.flags !== '*' && !/\d/.test(ch)) return undefined;
  }
  return 1;
}

function wrap(name: string, spec: WrapperSpec, args: Word[], sink: UnwrapSink): Word[] | undefined {
  if (spec.opaque) sink.opaque(spec.opaque);
  let k = 0;
  const operands: Word[] = [];
  while (k < args.length) {
    const w = args[k]!;
    const a = w.value;
    if (a === undefined) {
      sink.opaque(`${name} is given arguments built by an expansion`);
      return undefined;
    }
    if (a === '--') {
      k++;
      break;
    }
    // `nice -10 cmd`, `nice --5 cmd`: an adjustment, not an option.
    if (name === 'nice' && /^--?\d+$/.test(a)) {
      k++;
      continue;
    }
    if (!a.startsWith('-') || a === '-') {
      if (operands.length < (spec.positional ?? 0) && spec.positional !== Infinity) {
        operands.push(w);
        k++;
        continue;
      }
      break;
    }
    const opt = a.split('=')[0]!;
    // `-qc 'cmd'`: a script option at the end of a short cluster.
    const clustered =
      !a.startsWith('--') &&
      a.length > 2 &&
      spec.script?.includes(`-${a.at(-1)}`) &&
      optionWidth(a.slice(0, -1), undefined, spec) !== undefined;
    if (clustered) {
      const text = args[k + 1]?.value;
      if (text === undefined) sink.opaque(`${name} ${a} runs text built by an expansion`);
      else sink.script(text);
      k += 2;
      continue;
    }
    if (spec.script?.includes(opt) || spec.script?.includes(a.slice(0, 2))) {
      const text = a.includes('=')
        ? a.slice(a.indexOf('=') + 1)
        : a.length > 2 && !a.startsWith('--')
          ? a.slice(2)
          : args[k + 1]?.value;
      if (text === undefined) sink.opaque(`${name} ${opt} runs text built by an expansion`);
      else sink.script(text);
      k += a.includes('=') || (a.length > 2 && !a.startsWith('--')) ? 1 : 2;
      continue;
    }
    const width = optionWidth(a, args[k + 1], spec);
    if (width === undefined) {
      sink.opaque(`${name} option ${a} is not one the gate knows, so the command it runs is uncertain`);
      return undefined;
    }
    k += width;
  }
  const rest = args.slice(k);
  if (spec.operandsAreScript) {
    const scripts = name === 'watch' ? [rest] : rest.map((w) => [w]);
    for (const s of scripts) {
      if (s.length === 0) continue;
      if (s.some((w) => w.value === undefined)) sink.opaque(`${name} runs text built by an expansion`);
      else sink.script(s.map((w) => w.value).join(' '));
    }
    return undefined;
  }
  // `script [file]` (no -c) runs an interactive shell: nothing more to see.
  if (spec.positional === Infinity) return undefined;
  return rest;
}
