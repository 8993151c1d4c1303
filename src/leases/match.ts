import picomatch from 'picomatch';

/**
 * Whether two lease paths can name the same file (docs/design.md §16). Paths are relative to
 * one checkout, `/`-separated. A plain path covers itself and, as a folder, everything under
 * it; a glob is matched with picomatch (the matcher tinyglobby, our glob tool's, is built on).
 * Two globs are compared by their fixed leading folders only, so `src/**` and `src/*.ts`
 * overlap and `docs/*` and `src/*` do not: a conflict may be reported that no file would
 * have, never the other way round.
 */

const compiled = new Map<string, (p: string) => boolean>();
const scanned = new Map<string, { glob: boolean; base: string }>();

function scan(p: string): { glob: boolean; base: string } {
  let s = scanned.get(p);
  if (!s) {
    const r = picomatch.scan(p);
    s = { glob: r.isGlob, base: r.isGlob ? r.base : p };
    scanned.set(p, s);
  }
  return s;
}

function matcher(glob: string): (p: string) => boolean {
  let m = compiled.get(glob);
  if (!m) {
    m = picomatch(glob, { dot: true });
    compiled.set(glob, m);
  }
  return m;
}

export function isGlob(p: string): boolean {
  return scan(p).glob;
}

/** a is b, or a folder that holds b. The empty path is the whole checkout. */
function within(folder: string, p: string): boolean {
  return folder === '' || folder === p || p.startsWith(folder + '/');
}

export function pathsOverlap(a: string, b: string): boolean {
  const sa = scan(a);
  const sb = scan(b);
  if (!sa.glob && !sb.glob) return within(a, b) || within(b, a);
  if (sa.glob && sb.glob) return within(sa.base, sb.base) || within(sb.base, sa.base);
  const [glob, plain, base] = sa.glob ? [a, b, sa.base] : [b, a, sb.base];
  // The plain path is matched, or is a folder the glob's matches lie in.
  return matcher(glob)(plain) || within(plain, base);
}
