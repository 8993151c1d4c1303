/**
 * Sees through commands that run other commands (§7): `env`, `timeout`, `nice`, `nohup`,
 * `xargs`, `command`, `exec`, `time`, `stdbuf`, `setsid`, `ionice`, `sudo`/`doas`, `find
 * -exec`, and shells and `eval` that run a string. Each wrapper is described by which of its
 * options take a value, so the command it runs is found the way the wrapper itself finds it.
 */

/** What one simple command really runs. */
export interface Expanded {
  /** The command as written, then each command it wraps (`env sudo ls` → 3 argvs). */
  argvs: string[][];
  /** Strings run as shell scripts (`sh -c`, `eval`, `watch`, `env -S`): checked recursively. */
  scripts: string[];
}

interface WrapperSpec {
  /** Short options that take a value (`-n 10`, `-n10`). */
  short: string;
  /** Long options that take a value when written without `=`. */
  long?: string[];
  /** Positional arguments before the wrapped command (`timeout DURATION`). */
  positional?: number;
}

const WRAPPERS: Record<string, WrapperSpec> = {
  timeout: { short: 'sk', long: ['--signal', '--kill-after'], positional: 1 },
  nice: { short: 'n', long: ['--adjustment'] },
  nohup: { short: '' },
  setsid: { short: '' },
  ionice: { short: 'cnpPu', long: ['--class', '--classdata', '--pid', '--pgid', '--uid'] },
  stdbuf: { short: 'ioe', long: ['--input', '--output', '--error'] },
  time: { short: 'fo', long: ['--format', '--output'] },
  exec: { short: 'a' },
  builtin: { short: '' },
  xargs: { short: 'IiEeLlnPsda', long: ['--max-args', '--max-procs', '--delimiter', '--arg-file', '--max-lines', '--max-chars', '--replace', '--eof'] },
  sudo: { short: 'ugCDhprtUT', long: ['--user', '--group', '--close-from', '--chdir', '--host', '--prompt', '--role', '--type', '--other-user', '--command-timeout'] },
  doas: { short: 'uC' },
  chroot: { short: '', long: ['--userspec', '--groups'], positional: 1 },
  // `busybox sh -c …`, `busybox rm -rf /`: the applet is the command.
  busybox: { short: '' },
};

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'fish']);
const SHELL_VALUE_OPTIONS = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']);
/** Words that start a compound command or negate one; the real command follows them. */
const PREFIX_WORDS = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'do', 'while', 'until', 'fi', 'done', 'esac']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** The name a shell would look up: the last path segment (`/usr/bin/sudo` → `sudo`). */
export function commandName(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

export function expandCommand(argv: readonly string[]): Expanded {
  const out: Expanded = { argvs: [], scripts: [] };
  collect(argv, out, 0);
  return out;
}

function collect(argv: readonly string[], out: Expanded, depth: number): void {
  let cur: readonly string[] | undefined = dropPrefix(argv);
  // Bounded: each step removes at least the wrapper's own name.
  for (let steps = 0; cur && cur.length && steps < 32; steps++) {
    out.argvs.push([...cur]);
    const next: readonly string[] | undefined = unwrapOnce(cur, out, depth);
    cur = next && dropPrefix(next);
  }
}

function dropPrefix(argv: readonly string[]): string[] {
  let k = 0;
  while (k < argv.length && (PREFIX_WORDS.has(argv[k]!) || ASSIGNMENT.test(argv[k]!))) k++;
  // `for x in a b c` and `case x in` name no command.
  if (argv[k] === 'for' || argv[k] === 'case' || argv[k] === 'select') return [];
  return argv.slice(k);
}

function unwrapOnce(argv: readonly string[], out: Expanded, depth: number): readonly string[] | undefined {
  const name = commandName(argv[0]!).toLowerCase();
  const args = argv.slice(1);
  if (name === 'env') return unwrapEnv(args, out);
  if (name === 'command') return args.some((a) => /^-[a-zA-Z]*[vV]/.test(a)) ? undefined : skipOptions(args, { short: '' });
  if (name === 'eval') {
    out.scripts.push(args.join(' '));
    return undefined;
  }
  if (name === 'watch') {
    const rest = skipOptions(args, { short: 'nd', long: ['--interval', '--differences'] });
    if (rest.length) out.scripts.push(rest.join(' '));
    return undefined;
  }
  if (name === 'find') {
    unwrapFindExec(args, out, depth);
    return undefined;
  }
  if (SHELLS.has(name)) {
    const script = shellScript(args);
    if (script !== undefined) out.scripts.push(script);
    return undefined;
  }
  const spec = WRAPPERS[name];
  if (!spec) return undefined;
  const rest = skipOptions(args, spec);
  if (name === 'xargs' && rest.length === 0) return undefined;
  return rest.slice(spec.positional ?? 0);
}

/** Skips a wrapper's options (and their values) up to the command it runs. */
function skipOptions(args: readonly string[], spec: WrapperSpec): string[] {
  let k = 0;
  while (k < args.length) {
    const a = args[k]!;
    if (a === '--') return args.slice(k + 1);
    if (!a.startsWith('-') || a === '-') break;
    if (a.startsWith('--')) {
      k += !a.includes('=') && spec.long?.includes(a) ? 2 : 1;
      continue;
    }
    // Short cluster: the first letter that takes a value ends it; its value is attached or next.
    const letters = a.slice(1);
    const at = [...letters].findIndex((ch) => spec.short.includes(ch));
    k += at !== -1 && at === letters.length - 1 ? 2 : 1;
  }
  return args.slice(k);
}

function unwrapEnv(args: readonly string[], out: Expanded): readonly string[] | undefined {
  let k = 0;
  while (k < args.length) {
    const a = args[k]!;
    if (a === '--') {
      k++;
      break;
    }
    const split = /^(?:-S|--split-string=?)(.*)$/.exec(a);
    if (split) {
      // `env -S 'sudo ls'` splits its argument into a command line.
      const text = split[1] || args[k + 1] || '';
      out.scripts.push([text, ...args.slice(split[1] ? k + 1 : k + 2)].join(' '));
      return undefined;
    }
    if (a === '-u' || a === '-C' || a === '--unset' || a === '--chdir') k += 2;
    else if (a.startsWith('-') && a !== '-') k++;
    else if (a === '-') k++;
    else break;
  }
  while (k < args.length && ASSIGNMENT.test(args[k]!)) k++;
  return args.slice(k);
}

/** `bash -lc 'script'` → the script; `bash file.sh` or `bash -s` → undefined (not a string). */
function shellScript(args: readonly string[]): string | undefined {
  let sawC = false;
  let k = 0;
  while (k < args.length) {
    const a = args[k]!;
    if (a === '--' || a === '-') {
      k++;
      break;
    }
    if (!/^[-+]/.test(a)) break;
    if (SHELL_VALUE_OPTIONS.has(a)) {
      k += 2;
      continue;
    }
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(a)) sawC = true;
    k++;
  }
  return sawC ? args[k] : undefined;
}

/** `find … -exec CMD {} ;` runs CMD: each such command is expanded like a top-level one. */
function unwrapFindExec(args: readonly string[], out: Expanded, depth: number): void {
  for (let k = 0; k < args.length; k++) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(args[k]!)) continue;
    const end = args.findIndex((a, j) => j > k && (a === ';' || a === '+'));
    const inner = args.slice(k + 1, end === -1 ? args.length : end);
    if (inner.length && depth < 8) collect(inner, out, depth + 1);
    k = end === -1 ? args.length : end;
  }
}
