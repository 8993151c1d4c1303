import { git } from './git.js';

/** A branch tip and the tip it is measured against (commit ids). */
export interface TipPair {
  own: string;
  target: string;
}

/** How far `own` and `target` have gone apart: commits on each side only, and where they parted. */
export interface Divergence {
  ahead: number;
  behind: number;
  /** Their merge base (the first when there are several); null when they share no history. */
  base: string | null;
}

/**
 * Ahead, behind and merge base for many pairs from two git processes, not one per pair
 * (`review`, `status` with fifty worktree agents, docs/benchmarks-work.md): the commits every tip
 * shares are found once (`merge-base --octopus`), the history above them is read once
 * (`rev-list --parents --boundary`) and each pair is counted in that graph here. git ≥ 2.41
 * does the counting in `for-each-ref %(ahead-behind:…)`; this works with older git too.
 * A pair the graph cannot settle (tips with no common history, several candidate bases
 * below the shared commit) gets one `rev-list --count` and `merge-base` of its own. `env`:
 * git's environment, for objects read through an alternate (standing.ts). `floor`: a commit
 * every tip likely descends from (the base all agents' worktrees were made from), tried
 * instead of `merge-base --octopus`, one git process fewer; the read shows whether every tip
 * does descend from it, and where one does not, the octopus read is made after all.
 */
export async function standings(
  cwd: string,
  pairs: readonly TipPair[],
  env?: NodeJS.ProcessEnv,
  floor?: string,
): Promise<Divergence[]> {
  const tips = [...new Set(pairs.flatMap((p) => [p.own, p.target]))];
  if (tips.length === 0) return [];
  const graph = (floor && (await historyOver(cwd, tips, floor, env))) || (await historyAbove(cwd, tips, env));
  return Promise.all(pairs.map((p) => (graph && inGraph(graph, p)) ?? alone(cwd, p, env)));
}

/** Included commits with their parents; boundary commits (shared by every tip) have none listed. */
interface Graph {
  parents: Map<string, string[]>;
  boundary: Set<string>;
}

async function historyAbove(cwd: string, tips: string[], env?: NodeJS.ProcessEnv): Promise<Graph | null> {
  const shared =
    tips.length === 1 ? { code: 0, stdout: tips[0]! } : await git(cwd, ['merge-base', '--octopus', ...tips], env);
  const floor = shared.stdout.trim().split('\n')[0];
  if (shared.code !== 0 || !floor) return null;
  return historyFrom(cwd, tips, floor, env);
}

/**
 * The history above `floor`, when every tip descends from it (is it, or reaches it in the
 * read); null otherwise. Everything below a commit every tip reaches is shared by every tip,
 * which is all the count needs of the octopus merge base.
 */
async function historyOver(cwd: string, tips: string[], floor: string, env?: NodeJS.ProcessEnv): Promise<Graph | null> {
  if (!/^[0-9a-f]{40,64}$/.test(floor)) return null;
  const g = await historyFrom(cwd, tips, floor, env);
  if (!g) return null;
  for (const t of tips) if (t !== floor && !reach(g, t).has(floor)) return null;
  return g;
}

async function historyFrom(cwd: string, tips: string[], floor: string, env?: NodeJS.ProcessEnv): Promise<Graph | null> {
  const r = await git(cwd, ['rev-list', '--parents', '--boundary', ...tips, `^${floor}`], env);
  if (r.code !== 0) return null;
  const g: Graph = { parents: new Map(), boundary: new Set() };
  for (const line of r.stdout.split('\n')) {
    if (!line) continue;
    if (line.startsWith('-')) g.boundary.add(line.slice(1).split(' ')[0]!);
    else {
      const [c, ...ps] = line.split(' ');
      g.parents.set(c!, ps);
    }
  }
  // A tip below the floor is the floor itself (merge-base of all): a boundary commit.
  for (const t of tips) if (!g.parents.has(t)) g.boundary.add(t);
  return g;
}

/** Every commit reachable from `from` in the graph, boundary commits included. */
function reach(g: Graph, from: string): Set<string> {
  const seen = new Set<string>([from]);
  const todo = [from];
  for (let c = todo.pop(); c !== undefined; c = todo.pop()) {
    for (const p of g.parents.get(c) ?? []) {
      if (seen.has(p)) continue;
      seen.add(p);
      todo.push(p);
    }
  }
  return seen;
}

function inGraph(g: Graph, p: TipPair): Divergence | null {
  const own = reach(g, p.own);
  const target = reach(g, p.target);
  let ahead = 0;
  let behind = 0;
  for (const c of own) if (!target.has(c) && !g.boundary.has(c)) ahead++;
  for (const c of target) if (!own.has(c) && !g.boundary.has(c)) behind++;
  // The merge base: a common commit that is no other common commit's ancestor.
  const common = [...own].filter((c) => target.has(c));
  const below = new Set<string>();
  const todo = common.flatMap((c) => g.parents.get(c) ?? []);
  for (let c = todo.pop(); c !== undefined; c = todo.pop()) {
    if (below.has(c)) continue;
    below.add(c);
    todo.push(...(g.parents.get(c) ?? []));
  }
  const best = common.filter((c) => !below.has(c));
  // Several boundary commits left: which is the lower one is below the graph's floor.
  if (best.length !== 1 && !best.some((c) => g.parents.has(c))) return null;
  return { ahead, behind, base: best.find((c) => g.parents.has(c)) ?? best[0] ?? null };
}

async function alone(cwd: string, p: TipPair, env?: NodeJS.ProcessEnv): Promise<Divergence> {
  const [counts, base] = await Promise.all([
    git(cwd, ['rev-list', '--left-right', '--count', `${p.target}...${p.own}`], env),
    git(cwd, ['merge-base', p.target, p.own], env),
  ]);
  const [behind, ahead] = counts.stdout.trim().split(/\s+/).map(Number);
  return { ahead: ahead || 0, behind: behind || 0, base: base.code === 0 ? base.stdout.trim() || null : null };
}

/**
 * The files each `own` changes since `base` (`git diff --name-only base...own`), for many
 * pairs from one `git diff-tree --stdin`: each input line is `<own> <base>`, the base read as
 * own's only parent, so each answer is the diff from base to own.
 */
export async function changedSince(cwd: string, pairs: readonly { own: string; base: string }[]): Promise<string[][]> {
  return (await readChanged(cwd, pairs)) ?? pairs.map(() => []);
}

/** `changedSince`, or null when git could not answer (a guess read beside the counts is then read again). */
export async function readChanged(
  cwd: string,
  pairs: readonly { own: string; base: string }[],
): Promise<string[][] | null> {
  if (pairs.length === 0) return [];
  const r = await git(
    cwd,
    ['diff-tree', '--stdin', '--always', '-r', '-M', '--name-only', '-z'],
    undefined,
    pairs.map((p) => `${p.own} ${p.base}\n`).join(''),
  );
  if (r.code !== 0) return null;
  // -z: each answer is its first commit id, then its paths, all NUL-terminated.
  const out = pairs.map((): string[] => []);
  let i = -1;
  for (const field of r.stdout.split('\0')) {
    if (!field) continue;
    if (i + 1 < pairs.length && field === pairs[i + 1]!.own) i++;
    else if (i >= 0) out[i]!.push(field);
  }
  return out;
}
