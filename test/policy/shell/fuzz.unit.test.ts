import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DENY_COMMANDS } from '../../../src/config/schema.js';
import { loadShellParser } from '../../../src/harness/shell-parser.js';
import { analyzeShell } from '../../../src/policy/shell/analyze.js';
import { createShellClassifier, type ShellClassifier } from '../../../src/policy/shell/classify.js';
import type { ShellParser } from '../../../src/policy/shell/syntax.js';
import { rng } from '../../helpers/seeded.js';

/**
 * Differential fuzz test of the gate's reading of word and command boundaries against bash's
 * own (docs/security.md). Command lines are generated from a fixed seed out of the pieces
 * where readers disagree: every kind of quoting (`'…'`, `"…"`, `$'…'` with its escapes,
 * backslashes), operators, comments, substitutions and brace expansions. bash runs each line
 * with the command names defined as functions that record their argv, so nothing real runs;
 * the gate analyzes the same line. Wherever the gate does not call a line opaque, the commands
 * bash ran must be exactly the commands the gate found, word for word.
 */

const BASH = '/bin/bash';
const SEED = 0x5eed31;
const CASES = 400;
const NAMES = ['a', 'b', 'c'];

function generator(seed: number): () => string {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const many = (max: number, f: () => string, sep = ''): string =>
    Array.from({ length: Math.floor(r() * (max + 1)) }, f).join(sep);
  // Characters that matter to one reader or the other.
  const hard = ['\\', "'", '"', ';', '&', '|', '#', ' ', '}', '{', ')', '(', '$', '`', '\n', 'x', 'y', ',', '*', '!'];
  const ansi = [
    '\\\\',
    "\\'",
    '\\"',
    '\\x41',
    '\\101',
    '\\n',
    '\\t',
    '\\e',
    '\\c',
    '\\u263a',
    'x',
    ' ',
    ';',
    '"',
    '$',
    '\\',
  ];
  const fragment = (depth: number): string => {
    switch (pick(['bare', 'bare', 'single', 'double', 'ansi', 'ansi', 'escape', 'subst', 'hard'])) {
      case 'bare':
        return pick(['x', 'y1', 'z-z', '-f', '/p', 'k=v', '.', '..']);
      case 'single':
        return `'${many(4, () => pick(hard))}'`;
      case 'double':
        return `"${many(4, () => pick(['x', ' ', "'", ';', '\\\\', '\\"', '\\$', '\\x', '#', '}', '|']))}"`;
      case 'ansi':
        return `$'${many(5, () => pick(ansi))}'`;
      case 'escape':
        return `\\${pick(hard.filter((c) => c !== '\n'))}`;
      case 'subst':
        return depth > 1
          ? 'x'
          : pick([`$(${command(depth + 1)})`, `"$(${command(depth + 1)})"`, `\`${pick(NAMES)} q\``]);
      default:
        return pick(hard);
    }
  };
  const word = (depth: number): string =>
    r() < 0.1
      ? pick(['{x,y}', '{1..3}', '{x}', '{,x}'])
      : Array.from({ length: 1 + Math.floor(r() * 3) }, () => fragment(depth)).join('');
  const command = (depth: number): string => {
    const name = pick([
      ...NAMES,
      ...NAMES.map((n) => `'${n}'`),
      ...NAMES.map((n) => `\\${n}`),
      ...NAMES.map((n) => `"${n}"`),
      ...NAMES.map((n) => `$'${n}'`),
    ]);
    return [name, ...Array.from({ length: Math.floor(r() * 4) }, () => word(depth))].join(' ');
  };
  return () => {
    let line = command(0);
    for (let k = Math.floor(r() * 3); k > 0; k--)
      line += pick([' ; ', ' && ', ' | ', '\n', ';', ' # ', ' #']) + command(0);
    return line;
  };
}

/**
 * Runs every line in one bash, each in a subshell: the named functions write their argv
 * (NUL-separated) to a file each, `runs/<line>.<pid>.<random>`, so the stages of a pipeline or a
 * background job cannot mix their records; `<line>.error` marks a line bash could not parse,
 * `<line>.failed` one whose status was not 0.
 */
function bashRuns(lines: string[], dir: string): { argv: string[][]; error: boolean; failed: boolean }[] | undefined {
  const file = join(dir, 'cases');
  const runs = join(dir, 'runs');
  mkdirSync(runs);
  writeFileSync(file, lines.map((l) => `${l}\0`).join(''));
  const fns = NAMES.map(
    (n) => `${n}() { printf '%s\\0' "\${FUNCNAME[0]}" "$@" > "$RUNS/$i.$BASHPID.$RANDOM$RANDOM"; }`,
  ).join('\n');
  const driver = `${fns}
i=0
while IFS= read -r -d '' line; do
  ( eval "$line"; s=$?; wait; exit $s ) 2>/dev/null </dev/null
  # eval's status for a line it cannot parse; the functions return 0, a missing command 127.
  s=$?
  [ $s = 2 ] && : > "$RUNS/$i.error"
  [ $s = 0 ] || : > "$RUNS/$i.failed"
  i=$((i + 1))
done < "$CASES"
: > "$RUNS/all.done"`;
  spawnSync(BASH, ['--norc', '--noprofile', '-c', driver], {
    cwd: join(dir, 'empty'),
    env: { PATH: '/usr/bin:/bin', HOME: dir, CASES: file, RUNS: runs, LC_ALL: 'C.UTF-8' },
    stdio: 'ignore',
    timeout: 500_000,
  });
  const names = readdirSync(runs);
  if (!names.includes('all.done')) return undefined;
  const byLine = new Map<number, string[]>();
  for (const name of names) {
    const at = Number(name.split('.')[0]);
    byLine.set(at, [...(byLine.get(at) ?? []), name]);
  }
  return lines.map((_, i) => {
    const names = byLine.get(i) ?? [];
    return {
      error: names.includes(`${i}.error`),
      failed: names.includes(`${i}.failed`),
      argv: names
        .filter((n) => !/\.(error|failed)$/.test(n))
        .map((n) => readFileSync(join(runs, n), 'utf8').split('\0').slice(0, -1)),
    };
  });
}

/** The gate's reading: the argv of each function command it found, expansions as undefined. */
function gateRuns(line: string, parser: ShellParser): (string | undefined)[][] {
  return analyzeShell(line, parser)
    .commands.map((c) => c.levels[0] ?? [])
    .filter((argv) => argv[0]?.value !== undefined && NAMES.includes(argv[0].value))
    .map((argv) => argv.map((w) => w.value));
}

/**
 * The gate's argv matches bash's; a word it cannot know (undefined) stands for any number of words, none included
 * (`$(…)` may print nothing).
 */
function sameArgv(gate: (string | undefined)[], argv: string[]): boolean {
  const go = (i: number, j: number): boolean => {
    if (i === gate.length) return j === argv.length;
    if (gate[i] === undefined) return go(i + 1, j) || (j < argv.length && go(i, j + 1));
    return j < argv.length && gate[i] === argv[j] && go(i + 1, j + 1);
  };
  return go(0, 0);
}

/**
 * Equal as multisets of argv: every command bash ran paired with one the gate found (a word the
 * gate cannot know may match several readings, so pairs are searched, not taken greedily).
 * `partial`: a command failed (a name not found stops a `&&` list), so bash may not have reached
 * every command the gate read: each command bash ran must still be one the gate found.
 */
function sameRuns(bash: string[][], gate: (string | undefined)[][], partial: boolean): boolean {
  if (partial ? bash.length > gate.length : bash.length !== gate.length) return false;
  const used = new Array<boolean>(gate.length).fill(false);
  const pair = (i: number): boolean => {
    if (i === bash.length) return true;
    for (let j = 0; j < gate.length; j++) {
      if (used[j] || !sameArgv(gate[j]!, bash[i]!)) continue;
      used[j] = true;
      if (pair(i + 1)) return true;
      used[j] = false;
    }
    return false;
  };
  return pair(0);
}

let parser: ShellParser;
let classify: ShellClassifier;
let dir: string;
beforeAll(async () => {
  parser = await loadShellParser();
  classify = createShellClassifier(parser, [...DEFAULT_DENY_COMMANDS]);
  dir = mkdtempSync(join(tmpdir(), 'flotilla-fuzz-'));
  // bash runs the lines in an empty directory, so `*` stays `*`.
  mkdirSync(join(dir, 'empty'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the gate reads word and command boundaries as bash does (fixed seed)', () => {
  it(
    `${CASES} generated command lines: no disagreement outside lines the gate calls opaque`,
    { timeout: 600_000 },
    () => {
      const next = generator(SEED);
      const lines = Array.from({ length: CASES }, next);
      const runs = bashRuns(lines, dir);
      if (!runs) throw new Error('bash did not run every generated line');
      const disagreements: { line: string; bash: string[][]; gate: (string | undefined)[][]; bashError: boolean }[] =
        [];
      let compared = 0;
      lines.forEach((line, i) => {
        if (classify(line).verdict === 'opaque') return;
        const bash = runs[i]!;
        const gate = gateRuns(line, parser);
        compared++;
        // A line bash cannot parse runs nothing; the gate must not have read commands into it either.
        if (
          !sameRuns(bash.argv, gate, bash.failed) ||
          (bash.error && gate.length > 0 && bash.argv.length === 0 && !line.includes('\n'))
        )
          disagreements.push({ line, bash: bash.argv, gate, bashError: bash.error });
      });
      if (process.env.FUZZ_DUMP) console.log(JSON.stringify(disagreements.map((d) => d.line)));
      expect(disagreements, JSON.stringify(disagreements.slice(0, 5), null, 1)).toEqual([]);
      // The test means something only if most lines were compared, not waved through as opaque.
      expect(compared).toBeGreaterThan(CASES / 3);
    },
  );
});
