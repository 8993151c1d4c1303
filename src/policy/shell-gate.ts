import { parseShell, type Pipeline } from './shell-parse.js';
import { compilePattern, matchStage, type CompiledPattern, type StagePattern } from './shell-pattern.js';
import { commandName, expandCommand } from './shell-unwrap.js';

/**
 * The shell gate (§7): checks a command line against the deny list before it runs. It is a
 * filter against accidents, not a sandbox — variables, aliases, scripts on disk and
 * interpreters other than the shell get through; docs/security.md lists what it misses.
 */

export interface ShellGateDecision {
  decision: 'allow' | 'deny';
  /** The deny-list pattern that matched (or `nesting-limit`). */
  rule?: string;
  /** The simple command that matched, as the gate saw it after unwrapping. */
  command?: string;
}

/** Commands nested deeper than this (`sh -c "sh -c '…'"`) are refused rather than guessed at. */
const MAX_NESTING = 8;

/** Strings that run their argument as a script, for `curl | sh`-style patterns. */
const SCRIPT_RUNNERS = new Set(['eval', 'source', '.']);

const cache = new Map<string, CompiledPattern>();
function compiled(source: string): CompiledPattern {
  let c = cache.get(source);
  if (!c) {
    c = compilePattern(source);
    if (cache.size > 1000) cache.clear();
    cache.set(source, c);
  }
  return c;
}

export function checkShellCommand(command: string, denyList: readonly string[]): ShellGateDecision {
  const patterns = denyList.filter((p) => p.trim() !== '').map(compiled);
  return check(command, patterns, 0) ?? { decision: 'allow' };
}

/** One simple command of a pipeline with everything it runs. */
interface Stage {
  argvs: string[][];
  subs: string[];
}

function check(script: string, patterns: CompiledPattern[], depth: number): ShellGateDecision | undefined {
  if (depth > MAX_NESTING) return { decision: 'deny', rule: 'nesting-limit', command: script.slice(0, 200) };
  const squashed = script.replace(/\s+/g, '');
  for (const p of patterns) {
    if (p.kind === 'text' && p.needle && squashed.includes(p.needle)) return { decision: 'deny', rule: p.source, command: script.trim() };
  }
  for (const pipeline of parseShell(script)) {
    const stages = expandPipeline(pipeline);
    for (const p of patterns) {
      if (p.kind !== 'pipeline') continue;
      const hit = matchPipeline(p.stages, stages);
      if (hit) return { decision: 'deny', rule: p.source, command: hit.join(' ') };
    }
    // What the commands run: substitutions and script strings, checked as commands in their own right.
    for (const stage of stages) {
      for (const inner of stage.subs) {
        const d = check(inner, patterns, depth + 1);
        if (d) return d;
      }
    }
  }
  return undefined;
}

function expandPipeline(pipeline: Pipeline): Stage[] {
  return pipeline.map((cmd) => {
    const { argvs, scripts } = expandCommand(cmd.words.map((w) => w.value));
    return { argvs, subs: [...cmd.subs, ...scripts] };
  });
}

/** The argv that completes a match of the pattern's stages, in order, within one pipeline. */
function matchPipeline(pattern: StagePattern[], stages: Stage[]): string[] | undefined {
  let next = 0;
  let last: string[] | undefined;
  for (const stage of stages) {
    const want = pattern[next]!;
    const argv = stage.argvs.find((a) => matchStage(want, a));
    if (argv) {
      last = argv;
      if (++next === pattern.length) return last;
    }
  }
  // `bash <(curl …)`, `sh -c "$(wget …)"`, `eval "$(curl …)"`: the runner's input is produced
  // by a substitution instead of a pipe.
  if (pattern.length === 2) {
    const [producer, runner] = pattern as [StagePattern, StagePattern];
    for (const stage of stages) {
      const runs = stage.argvs.find((a) => matchStage(runner, a) || (SCRIPT_RUNNERS.has(commandName(a[0] ?? '')) && runner.name.test('sh')));
      if (runs && stage.subs.some((s) => producesFrom(s, producer, 0))) return runs;
    }
  }
  return undefined;
}

function producesFrom(script: string, producer: StagePattern, depth: number): boolean {
  if (depth > MAX_NESTING) return true;
  for (const pipeline of parseShell(script)) {
    for (const stage of expandPipeline(pipeline)) {
      if (stage.argvs.some((a) => matchStage(producer, a))) return true;
      if (stage.subs.some((s) => producesFrom(s, producer, depth + 1))) return true;
    }
  }
  return false;
}
