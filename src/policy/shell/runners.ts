import { literalWord as literal, type Word } from './words.js';
import { INTERPRETERS, SHELL_VALUED } from './programs.js';
import { splitGitArgs } from './git.js';
import type { Levels, Stdin, UnwrapSink } from './unwrap.js';

/**
 * The programs that run code of their own (§7), for unwrap.ts: shells and interpreters (the
 * script handed back when it is literal, opaque when it is not), awk and sed programs that can
 * run commands, `find -exec`, ssh's command options and git's script hooks.
 */

/** `sh [-opts] -c 'script' [$0 args…]`, `sh file args`, `sh` / `sh -s` reading stdin. */
export function shell(name: string, args: Word[], stdin: Stdin | undefined, sink: UnwrapSink): undefined {
  let k = 0;
  let inline = false;
  let fromStdin = false;
  while (k < args.length) {
    const a = args[k]!.value;
    if (a === undefined) {
      sink.opaque(`${name} is given options built by an expansion`);
      return undefined;
    }
    if (a === '--' || a === '-') {
      fromStdin ||= a === '-';
      k++;
      break;
    }
    if (!/^[-+]/.test(a)) break;
    if (SHELL_VALUED.has(a)) {
      k += 2;
      continue;
    }
    if (a === '--command' || a.startsWith('--command=')) {
      inline = true;
      if (a.includes('=')) {
        sink.script(a.slice(a.indexOf('=') + 1));
        return undefined;
      }
    } else if (!a.startsWith('--')) {
      if (/^-[a-zA-Z]*c/.test(a)) inline = true;
      if (/^-[a-zA-Z]*s/.test(a)) fromStdin = true;
    }
    k++;
  }
  if (inline) {
    const script = args[k];
    if (!script) return undefined;
    if (script.value === undefined) sink.opaque(`${name} -c runs text built by an expansion`);
    else sink.script(script.value);
    return undefined;
  }
  if (!fromStdin && args[k]) {
    runsFile(args[k]!, name, sink);
    return undefined;
  }
  readsCode(stdin, name, true, sink);
  return undefined;
}

/** A shell or interpreter running a script file: opaque when its name or contents are not fixed. */
export function runsFile(file: Word, who: string, sink: UnwrapSink): void {
  const path = file.value;
  if (path === undefined) sink.opaque(`${who} runs a file named by an expansion or substitution (${file.raw})`);
  else if (/^\/dev\/(stdin|fd\/)|^\/proc\/self\/fd\//.test(path))
    sink.opaque(`${who} runs its standard input through ${path}`);
  else if (sink.written(path)) sink.opaque(`${who} runs ${path}, which this same command line writes`);
}

export function readsCode(stdin: Stdin | undefined, who: string, isShell: boolean, sink: UnwrapSink): void {
  if (!stdin) return;
  if (stdin.kind === 'pipe') sink.opaque(`text from a pipe is run by ${who}`);
  else if (stdin.kind === 'file') {
    if (stdin.word) runsFile(stdin.word, who, sink);
  } else if (stdin.text === undefined) sink.opaque(`${who} runs a here-document built by expansions`);
  else if (isShell) sink.script(stdin.text);
  else if (stdin.text.trim() !== '') sink.opaque(`${who} runs code given on its standard input`);
}

export function interpreter(
  name: string,
  key: string,
  args: Word[],
  stdin: Stdin | undefined,
  sink: UnwrapSink,
): undefined {
  const spec = INTERPRETERS[key]!;
  const lower = (s: string) => (key === 'pwsh' || key === 'powershell' ? s.toLowerCase() : s);
  for (let k = 0; k < args.length; k++) {
    const raw = args[k]!.value;
    if (raw === undefined) {
      sink.opaque(`${name} is given arguments built by an expansion`);
      return undefined;
    }
    const a = lower(raw);
    if (k === 0 && spec.evalSubcommand?.includes(a)) {
      sink.opaque(`${name} ${a} runs code given on its command line`);
      return undefined;
    }
    if (a === '--') {
      if (args[k + 1]) runsFile(args[k + 1]!, name, sink);
      else readsCode(stdin, name, false, sink);
      return undefined;
    }
    if (a === '-') {
      readsCode(stdin, name, false, sink);
      return undefined;
    }
    if (!a.startsWith('-')) {
      runsFile(args[k]!, name, sink);
      return undefined;
    }
    const opt = a.split('=')[0]!;
    if (spec.inline.includes(opt)) {
      sink.opaque(`${name} ${opt} runs code given on its command line`);
      return undefined;
    }
    if (a.startsWith('--') || (a.length > 2 && spec.inline.some((i) => i.length > 2 && a === i))) {
      if (spec.long?.includes(opt) && !a.includes('=')) k++;
      continue;
    }
    // A short cluster: `-ne`, `-Bc`, `-pi.bak`: an inline letter is code, a valued letter ends it.
    const letters = a.slice(1);
    for (let i = 0; i < letters.length; i++) {
      const ch = letters[i]!;
      if (spec.inline.includes(`-${ch}`)) {
        sink.opaque(`${name} -${ch} runs code given on its command line`);
        return undefined;
      }
      // perl's `-i.bak`, `-l`, `-0777`: a value that is only ever attached.
      if (spec.attached?.includes(ch)) {
        // `-i[ext]`: the rest of the cluster is the extension.
        if (ch === 'i') break;
        // `-l[octal]`, `-0[digits]`: digits, then the cluster goes on.
        i += /^[0-9]*/.exec(letters.slice(i + 1))![0].length;
        continue;
      }
      if (spec.valued.includes(ch)) {
        if (i === letters.length - 1) k++;
        break;
      }
    }
  }
  readsCode(stdin, name, false, sink);
  return undefined;
}

export function awk(args: Word[], sink: UnwrapSink): undefined {
  let program: Word | undefined;
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!.value ?? '';
    if (/^(-f|--file)$/.test(a) || /^(-f.|--file=)/.test(a)) return undefined;
    if (/^(-[FvWe]|--(field-separator|assign|source|include|load))$/.test(a)) {
      if (/^(-e|--source)$/.test(a)) program = args[k + 1];
      k++;
      continue;
    }
    if (a.startsWith('-') && a !== '-' && args[k]!.value !== undefined) continue;
    program = args[k];
    break;
  }
  if (!program) return undefined;
  if (program.value === undefined) sink.opaque('awk runs a program built by an expansion');
  else if (/\bsystem\s*\(/.test(program.value) || /\|/.test(program.value.replace(/\|\|/g, '')))
    sink.opaque('the awk program runs commands (system() or a pipe)');
  return undefined;
}

export function sed(args: Word[], sink: UnwrapSink): undefined {
  const scripts: (string | undefined)[] = [];
  let sandbox = false;
  let sawScript = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!.value;
    if (a === '--sandbox') sandbox = true;
    else if (a === '-e' || a === '--expression') {
      scripts.push(args[k + 1]?.value);
      sawScript = true;
      k++;
    } else if (a?.startsWith('--expression=')) {
      scripts.push(a.slice(13));
      sawScript = true;
    } else if (a === '-f' || a === '--file' || a?.startsWith('--file=')) {
      sawScript = true;
      if (a === '-f' || a === '--file') k++;
    } else if (a === '-l' || a === '--line-length') k++;
    else if (a !== undefined && a.startsWith('-') && a !== '-') continue;
    else if (!sawScript) {
      scripts.push(a);
      sawScript = true;
    }
  }
  if (sandbox) return undefined;
  for (const s of scripts) {
    if (s === undefined) sink.opaque('sed runs a script built by an expansion');
    else if (sedExecutes(s)) sink.opaque('the sed script runs commands (the e command or s///e)');
  }
  return undefined;
}

/** GNU sed's `e [command]` and the `e` flag of `s///`. */
export function sedExecutes(script: string): boolean {
  if (/(^|[;\n{}]|^\s*)\s*(\d+|\$|\/(?:\\.|[^/])*\/)?\s*,?\s*(\d+|\$)?\s*!?\s*e(\s|;|$)/.test(script)) return true;
  const re = /s(.)((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1([a-zA-Z0-9]*)/g;
  for (let m = re.exec(script); m; m = re.exec(script)) if (m[4]!.includes('e')) return true;
  return false;
}

/** `find PATH… -exec CMD {} ;`: CMD runs for every file; `-delete` is `rm -r` of the paths. */
export function find(args: Word[], sink: UnwrapSink, found: Levels): undefined {
  let k = 0;
  while (k < args.length && /^-[HLP]$|^-D$|^-O\d*$/.test(args[k]!.value ?? '')) k += args[k]!.value === '-D' ? 2 : 1;
  const paths: Word[] = [];
  while (k < args.length && args[k]!.value !== undefined && !/^[-(!),]/.test(args[k]!.value!)) paths.push(args[k++]!);
  const starts = paths.length ? paths : [literal('.')];
  for (; k < args.length; k++) {
    const a = args[k]!.value;
    if (a === '-delete') found.levels.push([literal('rm'), literal('-r'), literal('-f'), ...starts]);
    if (a === '-exec' || a === '-execdir' || a === '-ok' || a === '-okdir') {
      sink.opaque(`find ${a} runs a command for every file it finds`);
      let end = k + 1;
      while (end < args.length && args[end]!.value !== ';' && args[end]!.value !== '+') end++;
      const inner = args.slice(k + 1, end);
      // `{}` stands for every file found, the start paths among them.
      for (const start of starts)
        sink.nested(
          inner.map((w) =>
            w.value?.includes('{}')
              ? {
                  ...start,
                  value: start.value && w.value.replaceAll('{}', start.value),
                  symbolic: w.symbolic.replaceAll('{}', start.symbolic),
                }
              : w,
          ),
        );
      k = end;
    }
  }
  return undefined;
}

export function sshOptions(args: Word[], sink: UnwrapSink): undefined {
  args.forEach((w, k) => {
    const a = w.value ?? '';
    const opt = a === '-o' ? args[k + 1]?.value : a.startsWith('-o') ? a.slice(2) : undefined;
    if (opt !== undefined && /^\s*(proxycommand|localcommand|permitlocalcommand|knownhostscommand|match)\b/i.test(opt))
      sink.opaque(`ssh -o ${opt.split(/[=\s]/)[0]} runs a local command`);
  });
  return undefined;
}

/** `git submodule foreach 'cmd'`, `git rebase --exec 'cmd'`, `git bisect run cmd …`. */
export function gitScripts(args: Word[], sink: UnwrapSink): void {
  const values = args.map((w) => w.value);
  const { sub } = splitGitArgs(values);
  if (sub === -1) return;
  const rest = args.slice(sub + 1);
  const s = values[sub];
  if (s === 'submodule' && rest.some((w) => w.value === 'foreach')) {
    const cmd = rest.slice(rest.findIndex((w) => w.value === 'foreach') + 1).filter((w) => !w.value?.startsWith('-'));
    if (cmd.some((w) => w.value === undefined)) sink.opaque('git submodule foreach runs text built by an expansion');
    else if (cmd.length) sink.script(cmd.map((w) => w.value).join(' '));
  }
  if (s === 'rebase') {
    rest.forEach((w, k) => {
      const v = w.value;
      const text =
        v === '-x' || v === '--exec'
          ? rest[k + 1]?.value
          : v?.startsWith('--exec=')
            ? v.slice(7)
            : v?.startsWith('-x') && v.length > 2
              ? v.slice(2)
              : null;
      if (text === undefined) sink.opaque('git rebase --exec runs text built by an expansion');
      else if (text !== null) sink.script(text);
    });
  }
  if (s === 'bisect' && rest[0]?.value === 'run' && rest.length > 1) sink.nested(rest.slice(1));
}

/** Quotes a word for re-parsing as part of a script. */
export function quoteWord(v: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}
