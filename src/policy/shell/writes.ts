import { basename } from './unwrap.js';
import type { Word } from './words.js';

/**
 * Files a command writes through its own arguments (redirections are the analyzer's), and
 * files it makes as a copy or link of another: a write to a block device is a write however
 * it is spelled and by whatever program (`dd of=`, `cp img /dev/sda`, `tee /dev/sda`,
 * `ddrescue img /dev/sda`, `rsync img /dev/sda`, `openssl enc -out /dev/sda`, `fdisk /dev/sda`),
 * and a program copied or linked under a new name is still that program (docs/security.md).
 */

interface OperandSpec {
  /** Short options that take a value. */
  valued: string;
  /** Long options that take a value when written without `=`. */
  long?: string[];
  /** The option naming the target directory (`-t DIR`, `--target-directory=DIR`). */
  target?: boolean;
}

const SPECS: Record<string, OperandSpec> = {
  cp: { valued: 'tS', long: ['--target-directory', '--suffix'], target: true },
  mv: { valued: 'tS', long: ['--target-directory', '--suffix'], target: true },
  ln: { valued: 'tS', long: ['--target-directory', '--suffix'], target: true },
  install: {
    valued: 'tSmogM',
    long: ['--target-directory', '--suffix', '--mode', '--owner', '--group', '--strip-program', '--context'],
    target: true,
  },
  tee: { valued: '', long: [] },
  shred: { valued: 'ns', long: ['--iterations', '--size', '--random-source'] },
  sponge: { valued: '', long: [] },
  truncate: { valued: 'sr', long: ['--size', '--reference'] },
  // Copiers whose last operand is the destination, local or `host:path`.
  rsync: {
    valued: 'efBTM',
    long: [
      '--rsh',
      '--rsync-path',
      '--filter',
      '--exclude',
      '--include',
      '--exclude-from',
      '--include-from',
      '--files-from',
      '--temp-dir',
      '--partial-dir',
      '--backup-dir',
      '--suffix',
      '--compare-dest',
      '--copy-dest',
      '--link-dest',
      '--chmod',
      '--chown',
      '--usermap',
      '--groupmap',
      '--timeout',
      '--contimeout',
      '--bwlimit',
      '--log-file',
      '--log-file-format',
      '--out-format',
      '--password-file',
      '--max-size',
      '--min-size',
      '--max-delete',
      '--modify-window',
      '--block-size',
      '--checksum-choice',
      '--compress-choice',
      '--compress-level',
      '--skip-compress',
      '--port',
      '--sockopts',
      '--info',
      '--debug',
      '--remote-option',
      '--iconv',
      '--address',
      '--protocol',
      '--write-batch',
      '--only-write-batch',
      '--read-batch',
      '--stop-after',
      '--stop-at',
      '--outbuf',
      '--early-input',
      '--copy-as',
    ],
  },
  scp: { valued: 'cDFiJloPSX', long: [] },
  // `ddrescue IN OUT [MAPFILE]`: everything after the input is written.
  ddrescue: {
    valued: 'abcCeEFHiKmoOrsTxZ',
    long: [
      '--min-read-rate',
      '--sector-size',
      '--cluster-size',
      '--max-bad-areas',
      '--max-error-rate',
      '--fill-mode',
      '--test-mode',
      '--input-position',
      '--skip-size',
      '--domain-mapfile',
      '--output-position',
      '--retry-passes',
      '--size',
      '--timeout',
      '--extend-outfile',
      '--max-read-rate',
      '--log-events',
      '--log-rates',
      '--log-reads',
      '--pause-on-error',
      '--delay-slow',
      '--cpass',
      '--mapfile-interval',
      '--max-slow-reads',
      '--pause',
      '--command-mode',
    ],
  },
};

/** The copies of `dd` that take `of=FILE`. */
const DD_LIKE = /^(dd|dcfldd|dc3dd|ddpt|sg_dd)$/;

/**
 * Programs whose `-o` is a flag or a value that is not a file to write, so the word after it
 * is not written (`ls -o /dev/sda` lists it, `grep -o x /dev/sda` and `od -o /dev/sda` read it).
 */
const O_IS_NOT_OUTPUT = new Set([
  'ls',
  'dir',
  'vdir',
  'grep',
  'egrep',
  'fgrep',
  'zgrep',
  'rg',
  'ag',
  'ack',
  'rsync',
  'tar',
  'bsdtar',
  'cpio',
  'xargs',
  'id',
  'ps',
  'lsof',
  'od',
  'hexdump',
  'strings',
  'find',
  'test',
  '[',
  'bash',
  'sh',
  'set',
]);

/**
 * `-o FILE`, `-oFILE` (absolute), `-out FILE` (openssl), `--output[=]FILE`, `--out[=]FILE`, `--outfile`,
 * `--output-file`: whatever the program, FILE is written.
 */
function outputOptions(name: string, args: readonly Word[]): Word[] {
  const out: Word[] = [];
  args.forEach((w, k) => {
    const a = w.value ?? '';
    const next = args[k + 1];
    if (/^(-out|--out|--output|--outfile|--output-file|--output-document)$/.test(a) && next) out.push(next);
    else if (a === '-o' && next && !O_IS_NOT_OUTPUT.has(name)) out.push(next);
    const eq =
      /^(?:-out|--out|--output|--outfile|--output-file|--output-document)=(.+)$/s.exec(a) ??
      (O_IS_NOT_OUTPUT.has(name) ? null : /^-o(\/.*)$/s.exec(a));
    if (eq) out.push({ ...w, value: eq[1], raw: eq[1]!, symbolic: eq[1]!, glob: eq[1]! });
  });
  return out;
}

/**
 * Partition editors write the disk they are given unless an option says they only list it:
 * `fdisk /dev/sda` is a write, `fdisk -l /dev/sda` a read. `reads` is the listing letters
 * and long options; `only` means every option must be one of them (sgdisk mixes reads and
 * writes in one call).
 */
const PARTITION_EDITORS: Record<string, { letters: string; long: string[]; only?: boolean }> = {
  fdisk: { letters: 'lxshV', long: ['--list', '--list-details', '--getsz', '--help', '--version'] },
  gdisk: { letters: 'lhv', long: ['--help', '--version'] },
  cgdisk: { letters: 'hv', long: ['--help', '--version'] },
  cfdisk: { letters: 'rhV', long: ['--read-only', '--help', '--version'] },
  sfdisk: {
    letters: 'ldJsgVFTh',
    long: [
      '--list',
      '--dump',
      '--json',
      '--show-size',
      '--show-geometry',
      '--verify',
      '--list-free',
      '--list-types',
      '--help',
      '--version',
    ],
  },
  sgdisk: {
    letters: 'pviLOPb?hV',
    long: [
      '--print',
      '--verify',
      '--info',
      '--list-types',
      '--print-mbr',
      '--pretend',
      '--backup',
      '--help',
      '--version',
      '--usage',
    ],
    only: true,
  },
};

/** parted commands (and their arguments) that only read: `parted -s /dev/sda unit s print free`. */
const PARTED_READS =
  /^(print|p|unit|help|version|align-check|quit|q|opt|optimal|min|minimal|free|all|list|devices|s|B|[kKMGT]i?B|compact|cyl|chs|%|\d+)$/;

function partitionEditorWrites(name: string, args: readonly Word[]): Word[] {
  const operands: Word[] = [];
  const options: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!.value;
    if (a === undefined || !a.startsWith('-') || a === '-') operands.push(args[k]!);
    // parted's alignment takes a value.
    else if (name === 'parted' && (a === '-a' || a === '--align')) k++;
    else options.push(a);
  }
  if (name === 'parted') {
    if (options.some((o) => o === '-l' || o === '--list' || /^-[a-z]*l/.test(o))) return [];
    const commands = operands.slice(1);
    return commands.length > 0 && commands.every((c) => c.value !== undefined && PARTED_READS.test(c.value))
      ? []
      : operands.slice(0, 1);
  }
  const spec = PARTITION_EDITORS[name]!;
  const isRead = (o: string): boolean =>
    o.startsWith('--') ? spec.long.includes(o.split('=')[0]!) : [...o.slice(1)].some((ch) => spec.letters.includes(ch));
  const reads = spec.only
    ? options.length > 0 &&
      options.every((o) => (o.startsWith('--') ? isRead(o) : [...o.slice(1)].every((ch) => spec.letters.includes(ch))))
    : options.some(isRead);
  return reads ? [] : operands;
}

/** `host:/dev/sda`, `user@host:/dev/sda`: the path on the other machine, which is written all the same. */
function remotePath(w: Word): Word {
  const host = /^(?:[^/:@\s]+@)?(?:\[[^\]]*\]|[^/:\s]+):(?=\/)/.exec(w.value ?? '')?.[0];
  if (!host) return w;
  const n = host.length;
  return { ...w, value: w.value!.slice(n), raw: w.raw.slice(n), symbolic: w.symbolic.slice(n), glob: w.glob.slice(n) };
}

interface Operands {
  operands: Word[];
  target: Word | undefined;
  /** `-d`: install makes directories; `-T`: the last operand is never a directory. */
  letters: string;
}

function split(args: readonly Word[], spec: OperandSpec): Operands {
  const operands: Word[] = [];
  let target: Word | undefined;
  let letters = '';
  let ended = false;
  for (let k = 0; k < args.length; k++) {
    const w = args[k]!;
    const a = w.value;
    if (ended || a === undefined || !a.startsWith('-') || a === '-') {
      operands.push(w);
      continue;
    }
    if (a === '--') {
      ended = true;
      continue;
    }
    if (a.startsWith('--')) {
      const name = a.split('=')[0]!;
      const value = a.includes('=')
        ? { ...w, value: a.slice(a.indexOf('=') + 1), raw: a.slice(a.indexOf('=') + 1) }
        : args[k + 1];
      if (name === '--target-directory' && spec.target) target = value;
      if (spec.long?.includes(name) && !a.includes('=')) k++;
      continue;
    }
    for (let i = 1; i < a.length; i++) {
      const ch = a[i]!;
      letters += ch;
      if (!spec.valued.includes(ch)) continue;
      const attached = a.slice(i + 1);
      const value = attached ? { ...w, value: attached, raw: attached } : args[k + 1];
      if (ch === 't' && spec.target) target = value;
      if (!attached) k++;
      break;
    }
  }
  return { operands, target, letters };
}

/**
 * The files `name args…` writes by its own arguments (`dd of=`, `tee F`, `cp … DEST`, `curl -o F`, `fdisk /dev/sda`).
 */
export function writtenBy(name: string, args: readonly Word[]): Word[] {
  return [...ownWrites(name, args), ...outputOptions(name, args)];
}

function ownWrites(name: string, args: readonly Word[]): Word[] {
  if (DD_LIKE.test(name))
    return args
      .filter((w) => /^of=/.test(w.value ?? w.symbolic))
      .map((w) => ({ ...w, value: w.value?.slice(3), symbolic: w.symbolic.slice(3), glob: w.glob.slice(3) }));
  if (name === 'wget') return args.flatMap((w, k) => (w.value === '-O' && args[k + 1] ? [args[k + 1]!] : []));
  if (name === 'parted' || name in PARTITION_EDITORS) return partitionEditorWrites(name, args);
  const spec = SPECS[name];
  if (!spec) return [];
  const { operands, target } = split(args, spec);
  if (name === 'tee' || name === 'shred' || name === 'sponge' || name === 'truncate') return operands;
  if (name === 'ddrescue') return operands.slice(1);
  if (name === 'rsync' || name === 'scp') return operands.length > 1 ? [remotePath(operands.at(-1)!)] : [];
  if (name === 'ln') return made(name, args).map((m) => m.path);
  if (target) return [target];
  // `cp SRC… DEST`: DEST itself, or DEST/SRC's name when DEST is a directory.
  return operands.length > 1 ? [operands.at(-1)!] : [];
}

export interface MadeFile {
  /** The path made. */
  path: Word;
  /** The file it is a copy of or a link to. */
  from: Word;
}

/** Files `cp`, `mv`, `ln` and `install` make from others, with what each is made from. */
export function made(name: string, args: readonly Word[]): MadeFile[] {
  const spec = SPECS[name];
  if (!spec?.target || name === 'tee') return [];
  const { operands, target, letters } = split(args, spec);
  if (name === 'install' && letters.includes('d')) return [];
  const into = (dir: Word, from: Word): MadeFile => ({ path: joinWord(dir, from), from });
  if (target) return operands.map((from) => into(target, from));
  // `ln -s /usr/bin/sudo` links `./sudo`.
  if (operands.length === 1)
    return name === 'ln'
      ? [
          {
            path: {
              ...operands[0]!,
              value: operands[0]!.value === undefined ? undefined : basename(operands[0]!.value),
            },
            from: operands[0]!,
          },
        ]
      : [];
  const dest = operands.at(-1)!;
  const sources = operands.slice(0, -1);
  // DEST may be a directory (the gate cannot look): both readings are made.
  return sources.flatMap((from) =>
    letters.includes('T') || sources.length > 1
      ? [sources.length > 1 ? into(dest, from) : { path: dest, from }]
      : [{ path: dest, from }, into(dest, from)],
  );
}

function joinWord(dir: Word, from: Word): Word {
  const name = from.value === undefined ? undefined : basename(from.value.replace(/\/+$/, ''));
  return {
    ...dir,
    value: dir.value === undefined || name === undefined ? undefined : `${dir.value.replace(/\/+$/, '')}/${name}`,
    symbolic: `${dir.symbolic}/${name ?? '?'}`,
  };
}
