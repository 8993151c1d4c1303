import { denyRuleWhy } from '../../config/deny-commands.js';
import { analyzeShell, type AnalyzeOptions } from './analyze.js';
import { compileDenyPattern, matchDeny, matchPossible, type DenyPattern } from './deny.js';
import type { ShellParser } from './syntax.js';

/**
 * The shell gate's verdict on one command line (§7; docs/security-shell.md, "The shell gate"):
 * - `deny`: some simple command it runs matches `security.deny_commands`;
 * - `opaque`: it runs something the gate cannot decide statically (the reason says what);
 * - `plain`: everything else.
 * A deny anywhere wins over opaque. The gate is a filter against accidents; the OS sandbox
 * is the boundary (docs/security.md).
 */

export type ShellVerdictKind = 'deny' | 'opaque' | 'plain';

export interface ShellVerdict {
  verdict: ShellVerdictKind;
  /** The deny-list pattern that matched (deny). */
  rule?: string;
  /** What that rule guards against (deny by a default rule; a rule a person added has none). */
  why?: string;
  /** The simple command that matched, or the part that is opaque, as the gate saw it. */
  command?: string;
  /** Why it is opaque. */
  reason?: string;
}

export type ShellClassifier = (command: string) => ShellVerdict;

/** A classifier for one deny list; patterns are compiled once. */
export function createShellClassifier(
  parser: ShellParser,
  denyList: readonly string[],
  opts: AnalyzeOptions = {},
): ShellClassifier {
  const patterns: DenyPattern[] = denyList.filter((p) => p.trim() !== '').map((p) => compileDenyPattern(p, parser));
  return (command) => {
    const analysis = analyzeShell(command, parser, opts);
    const hit = matchDeny(patterns, analysis);
    if (hit) {
      const why = denyRuleWhy(hit.rule);
      return { verdict: 'deny', rule: hit.rule, command: hit.command, ...(why ? { why } : {}) };
    }
    const first = analysis.opaque[0];
    if (first) return { verdict: 'opaque', reason: first.reason, command: first.command };
    const maybe = matchPossible(patterns, analysis);
    if (maybe)
      return {
        verdict: 'opaque',
        reason: `an operand comes from an expansion, so the gate cannot tell whether it is what the deny rule \`${maybe.rule}\` names`,
        command: maybe.command,
      };
    return { verdict: 'plain' };
  };
}
