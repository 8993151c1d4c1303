import type { Command } from 'commander';
import type { Config } from '../../config/schema.js';
import { formatIssue, type Definition, type LoadResult } from '../../definitions/types.js';
import { effectivePolicy } from '../../policy/tool-policy.js';
import { secretSource, secretVarName } from '../../secrets/keys.js';
import { printJson } from '../output.js';
import { loadForCli } from './agents-load.js';

/** `agents list` and `agents show`: printing only. */

export async function listAgents(cmd: Command, opts: { json?: boolean; verbose?: boolean }): Promise<void> {
  const { config, result } = await loadForCli(cmd);
  if (opts.json) {
    printJson({
      definitions: result.definitions.map((d) => view(d, config)),
      errors: result.errors,
      warnings: result.warnings,
      shadowed: result.shadowed,
      trust: result.trust,
    });
    return;
  }
  const rows = result.definitions.map((d) => [
    d.name,
    d.source.scope,
    d.model ?? '-',
    d.description.replace(/\s+/g, ' '),
  ]);
  const widths = [0, 1, 2].map((i) =>
    Math.max(['NAME', 'SCOPE', 'MODEL'][i]!.length, ...rows.map((r) => r[i]!.length)),
  );
  const cols = process.stdout.columns || 120;
  const line = (r: string[]): string => {
    const head =
      r
        .slice(0, 3)
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ') + '  ';
    const room = Math.max(20, cols - head.length);
    const desc = r[3]!.length > room ? r[3]!.slice(0, room - 1) + '…' : r[3]!;
    return head + desc;
  };
  process.stdout.write(line(['NAME', 'SCOPE', 'MODEL', 'DESCRIPTION']) + '\n');
  for (const r of rows) process.stdout.write(line(r) + '\n');
  // Which file hides which, in words: a name that resolves elsewhere than a person expects is how a stranger's file
  // takes over.
  for (const s of result.shadowed) {
    process.stdout.write(
      `${s.name}: ${s.by === '<builtin>' ? 'the built-in' : s.by} shadows ${s.path === '<builtin>' ? 'the built-in' : s.path} (${s.scope})\n`,
    );
  }
  if (!result.trust.trusted && result.trust.ignored.length) {
    const { trustNotice } = await import('../trust-prompt.js');
    process.stderr.write(trustNotice(result.trust.ignored) + '\n');
  }
  reportIssues(result, opts.verbose === true);
}

export async function showAgent(cmd: Command, name: string, opts: { json?: boolean }): Promise<void> {
  const { config, result } = await loadForCli(cmd);
  const { pickDefinition } = await import('../../definitions/load.js');
  const def = pickDefinition(result, name);
  const warnings = result.warnings.filter((w) => w.path === def.source.path);
  const shadows = result.shadowed.filter((s) => s.name === def.name);
  if (opts.json) {
    printJson({ ...view(def, config), warnings, shadows });
    return;
  }
  const v = view(def, config);
  const out: [string, string][] = [
    ['name', def.name],
    ['description', def.description],
    ['source', `${def.source.path} (${def.source.scope})`],
    ['model', modelLine(def, config)],
    ['tools', v.effectiveTools.join(', ') || '(none)'],
    ['tools as written', toolsLine(def)],
    ['permission mode', def.permissionMode],
    ['secrets', def.secrets.map((k) => secretLine(k, config)).join(', ') || '(none)'],
    ['max turns', String(def.maxTurns)],
    ['timeout', `${def.timeoutSecs} s`],
    ['secret ttl', `${def.ttlSecs} s`],
    ['background', String(def.background)],
    ['memory', def.memory ?? '(none)'],
    ['skills', skillsLine(def)],
    ['hooks', hooksLine(def)],
    ['color', def.color ?? '(none)'],
  ];
  for (const s of shadows) out.push(['overrides', `${s.path} (${s.scope})`]);
  const width = Math.max(...out.map(([k]) => k.length));
  for (const [k, val] of out) process.stdout.write(`${(k + ':').padEnd(width + 1)} ${val}\n`);
  process.stdout.write(`\n--- prompt ---\n${def.body}\n`);
  for (const w of warnings) process.stderr.write(`flotilla: warning: ${formatIssue(w)}\n`);
}

/**
 * `github-token (as $GITHUB_TOKEN, value from $GITHUB_TOKEN)`: what a grant looks like and where the approver reads it.
 */
function secretLine(key: string, config: Config): string {
  const src = secretSource(key, config);
  return `${key} (as $${secretVarName(key, config)}, value from ${'command' in src ? `command '${src.command}'` : `$${src.env}`})`;
}

/** A definition as printed by `--json`: every field plus the effective tool list. */
function view(def: Definition, config: Config): Definition & { scope: string; path: string; effectiveTools: string[] } {
  const { tools } = effectivePolicy(def, config.agents.default_disallowed_tools);
  return { ...def, scope: def.source.scope, path: def.source.path, effectiveTools: tools };
}

function reportIssues(result: LoadResult, verbose: boolean): void {
  for (const e of result.errors) process.stderr.write(`flotilla: error: ${formatIssue(e)}\n`);
  if (verbose) for (const w of result.warnings) process.stderr.write(`flotilla: warning: ${formatIssue(w)}\n`);
  else if (result.warnings.length) {
    process.stderr.write(
      `flotilla: ${result.warnings.length} warning(s) — run 'flotilla agents list --verbose' to see them\n`,
    );
  }
}

function modelLine(def: Definition, config: Config): string {
  if (!def.model) return "(not set: the parent's model, else config model)";
  if (def.model === 'inherit') return "inherit (the parent's model)";
  const alias = config.models.aliases[def.model];
  return alias ? `${def.model} (→ ${alias})` : def.model;
}

function toolsLine(def: Definition): string {
  const t = def.tools;
  const parts: string[] = [];
  if (t.allow !== null) parts.push(`allow [${t.allow.join(', ')}]`);
  if (t.deny.length) parts.push(`deny [${t.deny.join(', ')}]`);
  if (t.except.length) parts.push(`except [${t.except.join(', ')}]`);
  return parts.join('; ') || '(not set: every tool)';
}

function skillsLine(def: Definition): string {
  const { include, exclude } = def.skills;
  if (!include.length && !exclude.length) return '(none)';
  return `include [${include.join(', ')}]${exclude.length ? `; exclude [${exclude.join(', ')}]` : ''}`;
}

function hooksLine(def: Definition): string {
  const parts = (['PreToolUse', 'PostToolUse'] as const).flatMap((e) =>
    def.hooks[e].flatMap((m) =>
      m.hooks.map((h) => `${e}[${m.matcher || '*'}]: ${h.command}${h.fail_closed ? ' (fail closed)' : ''}`),
    ),
  );
  return parts.join('; ') || '(none)';
}
