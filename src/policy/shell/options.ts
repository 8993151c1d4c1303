import { splitGitArgs } from './git.js';
import { inDir, normalizePathText, type Cwd } from './paths.js';
import type { Word } from './words.js';

/**
 * Normalized arguments of one command, so that equivalent spellings compare equal:
 * options are a set (`-rf` = `-r -f` = `--recursive --force` = `--rec --forc`), long options
 * resolve by unique prefix the way getopt_long does, signal names and numbers are one thing
 * (`kill -s KILL` = `-9` = `-SIGKILL`), `git push +ref` is a force push, and operands are
 * paths made canonical (`//`, `/./`, `/tmp/..`, `"${HOME:?}"` → `~`, `/?*` → `/*`).
 */

export interface NormalArgs {
  flags: Set<string>;
  /** Operands after normalization, and the words they came from. */
  operands: string[];
  operandWords: Word[];
}

interface Table {
  /** Long option (without `--`) → canonical flag. */
  long: Record<string, string>;
  /** Short letter → canonical flag (letters not listed stand for themselves). */
  short?: Record<string, string>;
  /** Short letters that take a value. */
  valued?: string;
  /** Long options that take a value. */
  longValued?: string[];
}

const TABLES: Record<string, Table> = {
  rm: {
    long: {
      recursive: 'r',
      force: 'f',
      dir: 'd',
      interactive: 'i',
      'one-file-system': 'one-file-system',
      'no-preserve-root': 'no-preserve-root',
      'preserve-root': 'preserve-root',
      verbose: 'v',
      help: 'help',
      version: 'version',
    },
    short: { R: 'r' },
  },
  chmod: {
    long: {
      recursive: 'R',
      changes: 'c',
      silent: 'f',
      quiet: 'f',
      verbose: 'v',
      reference: 'reference',
      'no-preserve-root': 'no-preserve-root',
      'preserve-root': 'preserve-root',
    },
    longValued: ['reference'],
  },
  chown: {
    long: {
      recursive: 'R',
      changes: 'c',
      silent: 'f',
      quiet: 'f',
      verbose: 'v',
      reference: 'reference',
      from: 'from',
      dereference: 'dereference',
      'no-dereference': 'h',
      'no-preserve-root': 'no-preserve-root',
      'preserve-root': 'preserve-root',
    },
    longValued: ['reference', 'from'],
  },
  git: {
    long: {
      force: 'f',
      'force-with-lease': 'force-with-lease',
      'force-if-includes': 'force-if-includes',
      delete: 'd',
      mirror: 'mirror',
      all: 'all',
      tags: 'tags',
      'dry-run': 'n',
      verbose: 'v',
      quiet: 'q',
      'set-upstream': 'u',
      atomic: 'atomic',
      'no-verify': 'no-verify',
      'follow-tags': 'follow-tags',
      prune: 'prune',
      'push-option': 'o',
      repo: 'repo',
      'receive-pack': 'receive-pack',
      exec: 'exec',
      hard: 'hard',
      soft: 'soft',
      mixed: 'mixed',
      merge: 'merge',
      keep: 'keep',
    },
    valued: 'o',
    longValued: ['push-option', 'repo', 'receive-pack', 'exec'],
  },
  kill: { long: {}, valued: 'sn' },
  wipefs: {
    long: { all: 'a', offset: 'o', backup: 'b', force: 'f', 'no-act': 'n', types: 't', output: 'O' },
    valued: 'otO',
    longValued: ['offset', 'types', 'output'],
  },
  sgdisk: { long: { 'zap-all': 'Z', zap: 'z', clear: 'o', delete: 'd' }, valued: 'AcdnNtuUr', longValued: ['delete'] },
  sfdisk: { long: { delete: 'delete' } },
  hdparm: {
    long: { 'security-erase': 'security-erase', 'security-erase-enhanced': 'security-erase' },
    longValued: ['security-erase', 'security-erase-enhanced'],
  },
  // Modes and the options that resolve them: `-C` = `--create`, `--zero` = `--zero-superblock`.
  mdadm: {
    long: {
      create: 'C',
      build: 'B',
      assemble: 'A',
      grow: 'G',
      incremental: 'I',
      monitor: 'F',
      detail: 'D',
      examine: 'E',
      query: 'Q',
      stop: 'S',
      run: 'R',
      scan: 's',
      manage: 'manage',
      misc: 'misc',
      'zero-superblock': 'zero-superblock',
      'raid-devices': 'n',
      level: 'l',
      'spare-devices': 'x',
      metadata: 'e',
      name: 'N',
      bitmap: 'b',
      layout: 'p',
      size: 'z',
    },
    valued: 'nlxeNbpz',
    longValued: ['raid-devices', 'level', 'spare-devices', 'metadata', 'name', 'bitmap', 'layout', 'size'],
  },
  badblocks: { long: {}, valued: 'bcdeiopt' },
};
TABLES.chgrp = TABLES.chown!;

const SIGNALS: Record<string, string> = {
  '1': 'HUP',
  '2': 'INT',
  '3': 'QUIT',
  '6': 'ABRT',
  '9': 'KILL',
  '15': 'TERM',
  '19': 'STOP',
  '18': 'CONT',
  '10': 'USR1',
  '12': 'USR2',
};
const signalName = (s: string): string => {
  const up = s.toUpperCase().replace(/^SIG/, '');
  return SIGNALS[up] ?? up;
};

/** Commands whose operands are files, read in the directory the command runs in (paths.ts). */
const FILE_OPERANDS = new Set([
  'rm',
  'rmdir',
  'unlink',
  'shred',
  'chmod',
  'chown',
  'chgrp',
  'chattr',
  'dd',
  'cp',
  'mv',
  'ln',
  'install',
  'tee',
  'truncate',
]);
/** …whose first operand is not a file (a mode, an owner). */
const FIRST_NOT_FILE = new Set(['chmod', 'chown', 'chgrp', 'chattr']);

/** Whether the operand at `index` of `name` can be a file (not `chmod`'s mode, not `chown`'s owner). */
export function isFileOperand(name: string, index: number): boolean {
  return !(FIRST_NOT_FILE.has(name) && index === 0);
}

/** `name` is the lower-case basename; `args` the words after it; `cwd` where it runs. */
export function normalizeArgs(name: string, args: readonly Word[], cwd?: Cwd): NormalArgs {
  if (name === 'kill') return killArgs(args);
  let words = args;
  if (name === 'git') {
    const { sub } = splitGitArgs(args.map((w) => w.value));
    if (sub !== -1) words = args.slice(sub);
  }
  const table = TABLES[name] ?? { long: {} };
  const flags = new Set<string>();
  const operands: string[] = [];
  const operandWords: Word[] = [];
  let ended = false;
  for (let k = 0; k < words.length; k++) {
    const w = words[k]!;
    const a = w.value ?? w.symbolic;
    if (ended || a === '-' || !a.startsWith('-') || w.value === undefined) {
      const file = FILE_OPERANDS.has(name) && !(FIRST_NOT_FILE.has(name) && operandWords.length === 0);
      const word = file ? inFileDir(w, name, cwd) : w;
      operands.push(normalizeOperand(word, name));
      operandWords.push(word);
      // `git push origin +main` forces the update of main.
      if (name === 'git' && words[0]?.value === 'push' && /^\+./.test(a)) flags.add('f');
    } else if (a === '--') ended = true;
    else if (a.startsWith('--')) {
      const long = a.slice(2).split('=')[0]!;
      for (const full of resolveLong(long, table)) flags.add(table.long[full] ?? full);
      if (!a.includes('=') && table.longValued?.some((v) => resolveLong(long, table).includes(v))) k++;
    } else {
      const letters = a.slice(1);
      for (let i = 0; i < letters.length; i++) {
        const ch = letters[i]!;
        flags.add(table.short?.[ch] ?? ch);
        if (table.valued?.includes(ch)) {
          if (i === letters.length - 1) k++;
          break;
        }
      }
    }
  }
  return { flags, operands, operandWords };
}

/** getopt_long: an exact name, else every option it is a prefix of (ambiguous ones all count). */
function resolveLong(long: string, table: Table): string[] {
  if (long in table.long) return [long];
  const matches = Object.keys(table.long).filter((k) => k.startsWith(long));
  return matches.length ? matches : [long];
}

/** `kill -9 PID`, `-KILL`, `-SIGKILL`, `-s KILL`, `-n 9`, `--signal KILL`; `--` and negative pids. */
function killArgs(args: readonly Word[]): NormalArgs {
  const flags = new Set<string>();
  const operands: string[] = [];
  let signal: string | undefined;
  let k = 0;
  for (; k < args.length; k++) {
    const a = args[k]!.value ?? args[k]!.symbolic;
    if (a === '--') {
      k++;
      break;
    }
    if (signal === undefined && /^(-s|-n|--signal)$/.test(a)) signal = signalName(args[++k]?.value ?? '?');
    else if (signal === undefined && /^--signal=/.test(a)) signal = signalName(a.slice(9));
    else if (signal === undefined && /^-(SIG)?[A-Za-z][A-Za-z0-9+-]*$/i.test(a) && a !== '-l' && a !== '-L')
      signal = signalName(a.slice(1));
    else if (signal === undefined && /^-\d+$/.test(a) && operands.length === 0) signal = signalName(a.slice(1));
    else if (/^-[lL]/.test(a)) flags.add('l');
    else break;
  }
  const operandWords = args.slice(k);
  for (const w of operandWords) operands.push(w.value ?? w.symbolic);
  flags.add(`signal=${signal ?? 'TERM'}`);
  return { flags, operands, operandWords };
}

/** `dd of=FILE`: the file part of a `key=value` operand is read in `cwd` like any file. */
function inFileDir(w: Word, name: string, cwd: Cwd): Word {
  if (name !== 'dd') return inDir(w, cwd);
  const key = /^[a-z]+=/.exec(w.value ?? w.symbolic)?.[0];
  if (!key) return w;
  const file = inDir(
    { ...w, value: w.value?.slice(key.length), symbolic: w.symbolic.slice(key.length), glob: w.glob.slice(key.length) },
    cwd,
  );
  return {
    ...file,
    value: file.value === undefined ? undefined : key + file.value,
    symbolic: key + file.symbolic,
    glob: key + file.glob,
  };
}

/** A pattern that matches every name in a directory (`*`, `?*`, `[!.]*`, `.[!.]*`) means "all of it". */
export const WHOLE_DIR = /^[*?]+$|^\[[^\]]*\]\*$|^\.\[[^\]]*\]\*$/;

/** Makes equivalent spellings of an operand equal. */
export function normalizeOperand(w: Word, command = ''): string {
  let s = w.value ?? w.symbolic;
  if (w.value === undefined) s = s.replace(/^\$HOME(?=\/|$)/, '~');
  if (command === 'chmod') s = chmodMode(s);
  // `of=/dev/./sda`, `--output=//dev/sda`: the path after `=` too.
  const key = /^(?:[a-z]+|--?[a-z][a-z-]*)=(?=[/~])/.exec(s)?.[0] ?? '';
  s = s.slice(key.length);
  if (!/^(\/|~(\/|$))/.test(s)) return key + s;
  const parts = normalizePathText(s).split('/');
  if (w.hasGlob && parts.length > 1 && WHOLE_DIR.test(parts.at(-1)!) && parts.at(-1)!.includes('*'))
    parts[parts.length - 1] = '*';
  return key + parts.join('/').replace(/^\/\//, '/');
}

function chmodMode(m: string): string {
  if (/^0*777$/.test(m)) return '777';
  if (/^(a|ugo|[ugo]{3})?[+=]rwx[tsX]*$/.test(m) && !/^\+/.test(m)) return '777';
  return m;
}
