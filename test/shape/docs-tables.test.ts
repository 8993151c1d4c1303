import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS, type CommandModule } from '../../src/cli/registry.js';
import { CANONICAL_TOOLS } from '../../src/policy/tool-names.js';
import { TOOL_TABLE } from '../../src/policy/tool-table.js';

/**
 * The docs' command tables and tool lists against the code: the command registry
 * (src/cli/registry.ts, each command's spec or commander definition) and the tool table
 * (src/policy/tool-table.ts). A command or tool added without its docs fails here.
 */
const repo = resolve(import.meta.dirname, '..', '..');
const read = (file: string): string => readFileSync(join(repo, file), 'utf8');

/** The command names in a Markdown table whose rows start with `` `flotilla <name> …` `` or `` `spawn-agent …` ``. */
export function documentedCommands(markdown: string): Set<string> {
  const names = new Set<string>();
  for (const line of markdown.split('\n')) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1];
    if (!first || !/^\s*`(flotilla |spawn-agent)/.test(first)) continue;
    for (const span of first.match(/`[^`]+`/g) ?? []) {
      const words = span.slice(1, -1).trim().split(/\s+/);
      const name = words[0] === 'flotilla' ? words[1] : words[0] === 'spawn-agent' ? 'spawn' : words[0];
      if (name && /^[a-z][a-z-]*$/.test(name)) names.add(name);
    }
  }
  return names;
}

async function description(load: () => Promise<CommandModule>): Promise<string> {
  const mod = await load();
  return 'spec' in mod ? mod.spec.description : mod.command().description();
}

/**
 * The names in backticks after `lead` in `markdown`, up to `until` (default: the paragraph's end); `a, b` in one pair
 * of backticks is two names.
 */
function namesAfter(markdown: string, lead: string, until = '\n\n'): string[] {
  const at = markdown.indexOf(lead);
  if (at === -1) return [];
  const rest = markdown.slice(at + lead.length);
  const text = rest.slice(0, rest.indexOf(until) === -1 ? undefined : rest.indexOf(until));
  return [...text.matchAll(/`([^`]+)`/g)]
    .flatMap((m) => m[1]!.split(',').map((w) => w.trim().split(/[\s{]/)[0]!))
    .filter((w) => /^[a-z_]+$/.test(w));
}

describe('the docs against the code', () => {
  it('README and docs/design.md list every command, and no command that does not exist', async () => {
    const internal: string[] = [];
    for (const [name, load] of Object.entries(COMMANDS))
      if ((await description(load)).startsWith('internal:')) internal.push(name);
    // `reap` is internal but documented (tmux runs it); `runtime-hook` is a vendor CLI's alone.
    const expected = Object.keys(COMMANDS)
      .filter((n) => !internal.includes(n) || n === 'reap')
      .sort();
    for (const file of ['README.md', 'docs/design.md']) {
      const documented = documentedCommands(read(file));
      expect({ file, missing: expected.filter((n) => !documented.has(n)) }).toEqual({ file, missing: [] });
      expect({ file, unknown: [...documented].filter((n) => !(n in COMMANDS)) }).toEqual({ file, unknown: [] });
    }
  });

  it('docs/definitions.md lists exactly the canonical tools', () => {
    expect(namesAfter(read('docs/definitions.md'), 'Canonical tools:')).toEqual([...CANONICAL_TOOLS]);
  });

  it('docs/design.md §6 describes every tool', () => {
    const described = namesAfter(read('docs/design.md'), '**Built-in tools**');
    expect(CANONICAL_TOOLS.filter((t) => !described.includes(t))).toEqual([]);
  });

  it('docs/design-agents.md §13 and docs/runtimes.md list exactly the tools `flotilla mcp` serves', () => {
    const mcp = TOOL_TABLE.filter((r) => r.mcp).map((r) => r.name as string);
    expect(
      namesAfter(read('docs/design-agents.md'), '`flotilla mcp` serves the fleet tools', ': the tool table'),
    ).toEqual(mcp);
    expect(namesAfter(read('docs/runtimes.md'), '`flotilla mcp` serves the fleet tools over MCP stdio')).toEqual(mcp);
  });

  it('reads the command names of a table row, its aliases and second forms', () => {
    const table = [
      '| `flotilla status` (`ls`) | x |',
      '| `flotilla output <id>` / `collect` | x |',
      '| `spawn-agent [opts] [prompt…]` | x |',
      '| `flotilla config show` / `config schema` | x |',
      '| `--json` | not a command row |',
    ].join('\n');
    expect([...documentedCommands(table)].sort()).toEqual(['collect', 'config', 'ls', 'output', 'spawn', 'status']);
  });
});
