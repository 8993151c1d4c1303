import { basename } from './unwrap.js';
import type { Word } from './words.js';

/**
 * Files a command writes through its own arguments (redirections are the analyzer's), and
 * files it makes as a copy or link of another: a write to a block device is a write however
 * it is spelled (`dd of=`, `cp img /dev/sda`, `tee /dev/sda`), and a program copied or linked
 * under a new name is still that program (docs/security.md).
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
  install: { valued: 'tSmogM', long: ['--target-directory', '--suffix', '--mode', '--owner', '--group', '--strip-program', '--context'], target: true },
  tee: { valued: '', long: [] },
  shred: { valued: 'ns', long: ['--iterations', '--size', '--random-source'] },
  sponge: { valued: '', long: [] },
  truncate: { valued: 'sr', long: ['--size', '--reference'] },
};

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
      const value = a.includes('=') ? { ...w, value: a.slice(a.indexOf('=') + 1), raw: a.slice(a.indexOf('=') + 1) } : args[k + 1];
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

/** The files `name args…` writes by its own arguments (`dd of=`, `tee F`, `cp … DEST`, `curl -o F`). */
export function writtenBy(name: string, args: readonly Word[]): Word[] {
  if (name === 'dd') return args.filter((w) => /^of=/.test(w.value ?? w.symbolic)).map((w) => ({ ...w, value: w.value?.slice(3), symbolic: w.symbolic.slice(3), glob: w.glob.slice(3) }));
  if (name === 'curl' || name === 'wget') {
    const out: Word[] = [];
    args.forEach((w, k) => {
      const a = w.value ?? '';
      if (/^(-o|-O|--output|--output-document)$/.test(a) && args[k + 1] && (name === 'wget' ? a !== '-o' : a !== '-O')) out.push(args[k + 1]!);
      const eq = /^(?:--output|--output-document)=(.+)$/s.exec(a);
      if (eq) out.push({ ...w, value: eq[1], raw: eq[1]! });
    });
    return out;
  }
  const spec = SPECS[name];
  if (!spec) return [];
  const { operands, target } = split(args, spec);
  if (name === 'tee' || name === 'shred' || name === 'sponge' || name === 'truncate') return operands;
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
  if (operands.length === 1) return name === 'ln' ? [{ path: { ...operands[0]!, value: operands[0]!.value === undefined ? undefined : basename(operands[0]!.value) }, from: operands[0]! }] : [];
  const dest = operands.at(-1)!;
  const sources = operands.slice(0, -1);
  // DEST may be a directory (the gate cannot look): both readings are made.
  return sources.flatMap((from) => (letters.includes('T') || sources.length > 1 ? [sources.length > 1 ? into(dest, from) : { path: dest, from }] : [{ path: dest, from }, into(dest, from)]));
}

function joinWord(dir: Word, from: Word): Word {
  const name = from.value === undefined ? undefined : basename(from.value.replace(/\/+$/, ''));
  return { ...dir, value: dir.value === undefined || name === undefined ? undefined : `${dir.value.replace(/\/+$/, '')}/${name}`, symbolic: `${dir.symbolic}/${name ?? '?'}` };
}
