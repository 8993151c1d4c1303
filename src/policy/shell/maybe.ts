import { WHOLE_DIR } from './options.js';
import { normalizePathText } from './paths.js';
import type { Word } from './words.js';

/**
 * Whether a word the gate cannot know (`$(…)`, `$((…))`, `"$X"/`, a file in a directory
 * from an expansion) could be a value a deny pattern's operand names: both are globs, the
 * word's expansions standing for any text, and they could match when some string matches
 * both. Decided on the text alone, by walking the two globs side by side.
 */

type Token = { kind: 'star' } | { kind: 'char'; test: (c: string) => boolean; char: string | undefined };

const STAR: Token = { kind: 'star' };
const ANY: Token = { kind: 'char', test: () => true, char: undefined };

/**
 * A glob source (backslash-escaped literals) as tokens; `[…]` is any one character (close enough, and on the side of
 * caution).
 */
function tokens(glob: string): Token[] {
  const out: Token[] = [];
  for (let k = 0; k < glob.length; k++) {
    const c = glob[k]!;
    if (c === '\\' && k + 1 < glob.length) {
      const lit = glob[++k]!;
      out.push({ kind: 'char', test: (x) => x === lit, char: lit });
    } else if (c === '*') {
      if (out.at(-1) !== STAR) out.push(STAR);
    } else if (c === '?') out.push(ANY);
    else if (c === '[' && glob.indexOf(']', k + 2) !== -1) {
      out.push(ANY);
      k = glob.indexOf(']', k + 2);
    } else out.push({ kind: 'char', test: (x) => x === c, char: c });
  }
  return out;
}

/** `{a,b}c` → `ac`, `bc` (pattern operands only; a word's braces are expanded already). */
function braceAlternatives(glob: string): string[] {
  for (let k = 0; k < glob.length; k++) {
    if (glob[k] === '\\') {
      k++;
      continue;
    }
    if (glob[k] !== '{') continue;
    let depth = 0;
    const cuts: number[] = [];
    for (let j = k + 1; j < glob.length; j++) {
      const d = glob[j]!;
      if (d === '\\') j++;
      else if (d === '{') depth++;
      else if (d === '}' && depth > 0) depth--;
      else if (d === ',' && depth === 0) cuts.push(j);
      else if (d === '}') {
        const bounds = [k, ...cuts, j];
        return bounds
          .slice(0, -1)
          .flatMap((b, i) =>
            braceAlternatives(glob.slice(0, k) + glob.slice(b + 1, bounds[i + 1]) + glob.slice(j + 1)),
          );
      }
    }
    break;
  }
  return [glob];
}

function intersect(a: Token[], b: Token[]): boolean {
  const seen = new Set<number>();
  const go = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    if (seen.has(key)) return false;
    seen.add(key);
    if (i === a.length && j === b.length) return true;
    const x = a[i];
    const y = b[j];
    if (x?.kind === 'star' && (go(i + 1, j) || (y !== undefined && go(i, j + 1)))) return true;
    if (y?.kind === 'star' && (go(i, j + 1) || (x !== undefined && go(i + 1, j)))) return true;
    if (x?.kind === 'char' && y?.kind === 'char') {
      const ok = x.char !== undefined ? y.test(x.char) : y.char !== undefined ? x.test(y.char) : true;
      return ok && go(i + 1, j + 1);
    }
    return false;
  };
  return go(0, 0);
}

/** The glob of what a word could be, with paths normalized the way operands are (options.ts). */
export function couldBeGlob(w: Word): string {
  let g = w.glob;
  if (/^\$HOME(\/|$)/.test(w.symbolic) && g.startsWith('*')) g = `~${g.slice(1)}`;
  if (!/^(\/|~(\/|$)|\*)/.test(g)) return g;
  // `..` after an expansion could climb anywhere.
  if (/(^|\/)\.\.(\/|$)/.test(g) && g.includes('*')) return '*';
  const lead = g.startsWith('*') ? '*' : '';
  const body = lead ? `/${g.slice(1)}` : g;
  let norm = normalizePathText(body.replace(/\/+$/, '') || '/');
  if (lead) norm = `*${norm === '/' ? '' : norm}`;
  const parts = norm.split('/');
  if (parts.length > 1 && WHOLE_DIR.test(parts.at(-1)!.replace(/\\/g, ''))) parts[parts.length - 1] = '*';
  return parts.join('/');
}

/** Could some value of `word` match the pattern operand glob `pattern`? */
export function couldMatch(word: Word, pattern: string): boolean {
  const w = tokens(couldBeGlob(word));
  return braceAlternatives(pattern).some((p) => intersect(w, tokens(p)));
}
