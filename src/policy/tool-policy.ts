import { CANONICAL_TOOLS, canonicalToolName } from './tool-names.js';
import type { PermissionMode } from './permission-mode.js';

/**
 * Tool policy (§7): which tools an agent is shown and may call. Pure: lists in, lists out.
 */

/** The `tools` field of a definition as written (names not yet canonical). */
export interface ToolsSpec {
  /** Allow list; `null` means every tool (minus `deny`). */
  allow: string[] | null;
  /** Deny list; only used without an allow list. */
  deny: string[];
  /** Removed from the result either way. */
  except: string[];
}

/** Which list kept a tool out; `tools.allow` means "not in the allow list". */
export type ToolRule =
  'agents.default_disallowed_tools' | 'tools.deny' | 'tools.except' | 'tools.allow' | 'parent' | 'unknown-tool';

/** An agent's effective policy, as stored in its registry record (§3) and compared at spawn. */
export interface EffectivePolicy {
  /** Canonical ids the agent may call, in canonical order. */
  tools: string[];
  /** Why each withheld built-in tool was withheld. */
  withheld: Record<string, ToolRule>;
  permissionMode: PermissionMode;
  /** Secret keys the agent may request. */
  secrets: string[];
}

const canonicalSet = (names: readonly string[]): Set<string> => new Set(names.map(canonicalToolName));

/**
 * Effective tools = (allow list, or all minus deny) minus `except` minus
 * `agents.default_disallowed_tools`. Deny always wins: the checks run deny-first, so a tool
 * both allowed and denied is denied.
 */
export function resolveTools(
  spec: ToolsSpec,
  defaultDisallowed: readonly string[] = [],
  available: readonly string[] = CANONICAL_TOOLS,
): Pick<EffectivePolicy, 'tools' | 'withheld'> {
  const disallowed = canonicalSet(defaultDisallowed);
  const deny = canonicalSet(spec.deny);
  const except = canonicalSet(spec.except);
  const allow = spec.allow === null ? null : canonicalSet(spec.allow);
  const tools: string[] = [];
  const withheld: Record<string, ToolRule> = {};
  for (const tool of available) {
    const rule: ToolRule | undefined = disallowed.has(tool)
      ? 'agents.default_disallowed_tools'
      : deny.has(tool)
        ? 'tools.deny'
        : except.has(tool)
          ? 'tools.except'
          : allow !== null && !allow.has(tool)
            ? 'tools.allow'
            : undefined;
    if (rule) withheld[tool] = rule;
    else tools.push(tool);
  }
  return { tools, withheld };
}

/**
 * The whole effective policy of a definition-like input. Listing secret keys implies the
 * `request_secret` tool even under an allow list that does not name it (a Claude-style
 * `tools: Read, Bash` plus `secrets: [github-token]` means "may ask for it"); a deny,
 * `except` or config list that names it still wins.
 */
export function effectivePolicy(
  def: { tools: ToolsSpec; permissionMode: PermissionMode; secrets: readonly string[] },
  defaultDisallowed: readonly string[] = [],
): EffectivePolicy {
  const resolved = resolveTools(def.tools, defaultDisallowed);
  if (def.secrets.length > 0 && resolved.withheld.request_secret === 'tools.allow') {
    const { request_secret: _granted, ...withheld } = resolved.withheld;
    resolved.tools = CANONICAL_TOOLS.filter((t) => t === 'request_secret' || resolved.tools.includes(t));
    resolved.withheld = withheld;
  }
  return { ...resolved, permissionMode: def.permissionMode, secrets: [...def.secrets] };
}

export interface ToolCallDecision {
  decision: 'allow' | 'deny';
  /** `tools` when allowed; otherwise the list that withheld it. */
  rule: 'tools' | ToolRule;
}

/**
 * Checks a call the model made. The model is only shown its effective tools, so a denial
 * here means it asked for something it was not given: the harness returns a policy error,
 * logs WARN and audits `policy_denied` with the rule.
 */
export function checkToolCall(policy: Pick<EffectivePolicy, 'tools' | 'withheld'>, toolName: string): ToolCallDecision {
  const id = canonicalToolName(toolName);
  if (policy.tools.includes(id)) return { decision: 'allow', rule: 'tools' };
  return { decision: 'deny', rule: policy.withheld[id] ?? 'unknown-tool' };
}

/**
 * Why each tool outside an agent's final list is withheld: the definition's own lists, or
 * `parent` for tools the definition allowed but its parent did not have (no escalation, §7).
 */
export function withheldRules(
  spec: ToolsSpec,
  defaultDisallowed: readonly string[],
  finalTools: readonly string[],
): Record<string, ToolRule> {
  const { tools, withheld } = resolveTools(spec, defaultDisallowed);
  const out: Record<string, ToolRule> = { ...withheld };
  for (const t of tools) if (!finalTools.includes(t)) out[t] = 'parent';
  return out;
}
