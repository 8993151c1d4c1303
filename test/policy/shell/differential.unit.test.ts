import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DENY_COMMANDS } from '../../../src/config/schema.js';
import { loadShellParser } from '../../../src/harness/shell-parser.js';
import { analyzeShell, type Analysis } from '../../../src/policy/shell/analyze.js';
import { createShellClassifier, type ShellClassifier } from '../../../src/policy/shell/classify.js';
import type { ShellParser } from '../../../src/policy/shell/syntax.js';
import { fields } from '../../../src/policy/shell/syntax.js';
import { evaluateWord, type Word } from '../../../src/policy/shell/words.js';
import { EVASIONS, ORDINARY, ORDINARY_OPAQUE } from './corpus.js';

/**
 * Differential test (docs/decisions-agents.md, "The shell gate on a real bash grammar"): for every corpus input, what
 * bash really executes must be
 * among the simple commands the gate's parser found. bash runs each input traced (`set -x`)
 * in restricted mode with an empty PATH, so nothing real runs: every external command lands
 * in `command_not_found_handle` (which records nothing but lets `&&` chains go on), `kill`
 * and `suspend` are disabled before restriction, and rbash forbids output redirection,
 * command names with a slash, `exec`, `cd`, `enable` and `command -p`.
 */

const BASH = '/bin/bash';
const MARK = '\x01';
const PREAMBLE = `command_not_found_handle() { __flotilla_nf=1; }; enable -n kill suspend; set -r; PS4=$'${MARK}'; set -x\n`;
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh']);
const HAS_BASH = spawnSync(BASH, ['--version']).status === 0;
/**
 * Inputs that never end on their own (fork bombs). They run bounded: as root, in a pid
 * namespace of their own (the whole tree dies with it when the timeout kills `unshare`) and as
 * `nobody`, whose process limit root does not have; otherwise under the user's own limit.
 */
const FORK_BOMBS = new Set([':(){ :|:& };:', 'bomb(){ bomb|bomb& }; bomb', 'f(){ f | f & }; f']);
const AS_ROOT = process.getuid?.() === 0;
function bounded(script: string): { argv: string[]; timeout: number } {
  if (AS_ROOT) {
    const cmd = `ulimit -u 16; ${PREAMBLE}${script}`;
    return {
      argv: [
        '/usr/bin/unshare',
        '--pid',
        '--fork',
        '--kill-child',
        '/usr/bin/setpriv',
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        BASH,
        '-c',
        cmd,
      ],
      timeout: 2_000,
    };
  }
  const cmd = `P=/usr/bin:/bin; ulimit -u $(( $(PATH=$P ps -U "$(id -u)" -o pid= | PATH=$P wc -l) + 16 )); ${PREAMBLE}${script}`;
  return { argv: [BASH, '-c', cmd], timeout: 2_000 };
}

let parser: ShellParser;
let classify: ShellClassifier;
let dir: string;
beforeAll(async () => {
  parser = await loadShellParser();
  classify = createShellClassifier(parser, [...DEFAULT_DENY_COMMANDS]);
  dir = mkdtempSync(join(tmpdir(), 'flotilla-diff-'));
  chmodSync(dir, 0o755); // the fork bombs run as nobody, from here
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The argv of every simple command bash executes for `script`, following `sh -c` scripts too. */
function executed(script: string, depth = 0): string[][] {
  const run = FORK_BOMBS.has(script) ? bounded(script) : { argv: [BASH, '-c', PREAMBLE + script], timeout: 10_000 };
  const r = spawnSync(run.argv[0]!, run.argv.slice(1), {
    cwd: dir,
    env: { PATH: join(dir, 'empty-path'), HOME: dir },
    encoding: 'utf8',
    timeout: run.timeout,
    input: '',
  });
  const lines = r.stderr.split('\n');
  const out: string[][] = [];
  for (let k = 0; k < lines.length; k++) {
    if (!lines[k]!.startsWith(MARK)) continue;
    // A traced word may hold a newline: take lines until the record parses whole.
    let record = lines[k]!.replace(new RegExp(`^${MARK}+`), '');
    while (incomplete(record) && k + 1 < lines.length && !lines[k + 1]!.startsWith(MARK)) record += `\n${lines[++k]}`;
    const argv = traceArgv(record);
    if (!argv || argv.length === 0 || argv[0]!.startsWith('__flotilla_') || /^(\[\[|\(\()/.test(record)) continue;
    if (/^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(argv[0]!)) continue;
    out.push(argv);
    const c = argv.indexOf('-c');
    if (depth < 3 && SHELLS.has(argv[0]!) && c > 0 && argv[c + 1] !== undefined)
      out.push(...executed(argv[c + 1]!, depth + 1));
  }
  return out;
}

function incomplete(record: string): boolean {
  const p = parser.parse(record);
  try {
    return p.root.hasError;
  } finally {
    p.dispose();
  }
}

function traceArgv(record: string): string[] | undefined {
  const p = parser.parse(record);
  try {
    const cmd = p.root.child(0);
    if (!cmd || cmd.type !== 'command') return undefined;
    const words = fields(cmd)
      .filter((f) => f.field === 'name' || f.field === 'argument')
      .flatMap((f) =>
        evaluateWord(f.field === 'name' ? (f.node.child(0) ?? f.node) : f.node, record, { braces: false }),
      );
    return words.map((w) => w.value ?? w.raw);
  } finally {
    p.dispose();
  }
}

/** True when the parser found a command that is this argv (expansions stand for any words). */
function found(analysis: Analysis, argv: string[]): boolean {
  // A pathname pattern expands to whatever files exist: like an expansion, any words.
  const home = (w: Word) =>
    w.hasGlob
      ? undefined
      : w.value !== undefined && /^~(\/|$)/.test(w.value) && !w.raw.startsWith("'")
        ? dir + w.value.slice(1)
        : w.value;
  return analysis.commands.some((c) =>
    c.levels.some((level) => {
      const words = level.map(home);
      if (words[0] !== argv[0]) return false;
      if (words.every((w) => w !== undefined))
        return words.length === argv.length && words.every((w, i) => w === argv[i]);
      // With expansions the count is unknown: the literal words must appear in order.
      let at = 1;
      for (const w of words.slice(1)) {
        if (w === undefined) continue;
        while (at < argv.length && argv[at] !== w) at++;
        if (at++ >= argv.length) return false;
      }
      return true;
    }),
  );
}

const all = [
  ...Object.entries(EVASIONS).flatMap(([family, cs]) => cs.map((c) => [family, c])),
  ...ORDINARY.map((c) => ['ordinary', c]),
  ...ORDINARY_OPAQUE.map((c) => ['ordinary (opaque)', c]),
];

describe.skipIf(!HAS_BASH)('the parser sees every simple command bash executes', () => {
  it.each(all)('%s: %j', (family, input) => {
    const analysis = analyzeShell(input, parser);
    const verdict = classify(input).verdict;
    const missed = executed(input).filter((argv) => !found(analysis, argv));
    // A command bash built from an expansion is what `opaque` means; anything else must be seen.
    if (verdict === 'plain' || analysis.opaque.length === 0)
      expect(missed, `bash ran commands the gate did not see (verdict ${verdict})`).toEqual([]);
    if (family.startsWith('ordinary'))
      expect(spawnSync(BASH, ['-n', '-c', input]).status, 'bash -n accepts it').toBe(0);
  });
});
