import { describe, expect, it } from 'vitest';
import { toolRefusal } from '../../src/harness/cli-host/hook.js';
import { effectivePolicy } from '../../src/policy/tool-policy.js';
import { CANONICAL_TOOLS, canonicalToolName, TOOL_ALIASES } from '../../src/policy/tool-names.js';
import { MCP_FLEET_TOOLS, TOOL_TABLE, VENDOR_CLIS, type ToolRow, type VendorCli } from '../../src/policy/tool-table.js';
import { compileClaudePolicy } from '../../src/runtimes/claude.js';
import { compileCodexPolicy } from '../../src/runtimes/codex.js';
import { compileGeminiPolicy } from '../../src/runtimes/gemini.js';
import { BUILT_RUNTIMES, loadRuntime, type Runtime } from '../../src/runtimes/index.js';
import { PERMISSION_MODES } from '../../src/policy/permission-mode.js';
import { TOOLS } from '../../src/tools/registry.js';
import type { ToolOps } from '../../src/tools/spec.js';
import type { Tool } from '../../src/tools/types.js';
import { ALL_TOOLS } from '../runtimes/launch-input.js';

/**
 * The one tool table (src/policy/tool-table.ts): every list of names comes from it, and a
 * canonical tool withheld by a definition is withheld under each vendor CLI's own names for it.
 */
const rows = TOOL_TABLE as readonly ToolRow[];

describe('the lists derived from the tool table', () => {
  it("the canonical tools, the MCP tools and the vendor CLIs are the table's", () => {
    expect(CANONICAL_TOOLS).toEqual(rows.map((r) => r.name));
    expect(MCP_FLEET_TOOLS).toEqual(rows.filter((r) => r.mcp).map((r) => r.name));
    expect([...VENDOR_CLIS]).toEqual([...BUILT_RUNTIMES]);
  });

  it('every other name stands for exactly one tool, whatever its case', () => {
    const seen = new Map<string, string>();
    const clashes: string[] = [];
    for (const r of rows) {
      for (const n of [r.name, ...VENDOR_CLIS.flatMap((c) => r.vendor[c]), ...r.claudeAliases, ...r.otherAliases]) {
        const key = n.toLowerCase();
        if (seen.has(key) && seen.get(key) !== r.name) clashes.push(`${n}: ${seen.get(key)} and ${r.name}`);
        seen.set(key, r.name);
      }
    }
    expect(clashes).toEqual([]);
    expect(canonicalToolName('list_directory')).toBe('glob');
    expect(canonicalToolName('APPLY_PATCH')).toBe('write');
    expect(canonicalToolName('MultiEdit')).toBe('edit');
    expect(TOOL_ALIASES.Bash).toBe('shell');
  });

  it("every tool the harness can build is a row, with the row's class, and every row is built", () => {
    // The factories' operations are never called here: only the tools' names and classes are read.
    const never = new Proxy(
      {},
      {
        get: () => () => {
          throw new Error('not called');
        },
      },
    );
    const ops = { fleet: never, send: never, inbox: never, merge: never, leases: never, tasks: never } as ToolOps;
    const built: Tool[] = TOOLS.flatMap(
      (t) =>
        t.create({
          ...ops,
          workspace: { cwd: '/nowhere', protectedRoots: [], writableWithin: [], shellTimeoutSecs: 30, env: {} },
          secrets: { keys: ['github-token'], request: never } as never,
        }) ?? [],
    );
    expect(built.map((t) => [t.name, t.klass])).toEqual(rows.map((r) => [r.name, r.class]));
  });

  it('a deny of a canonical tool in a definition takes every alias with it (tools: {glob: false} → list_directory too)', () => {
    const p = effectivePolicy({
      tools: { allow: null, deny: ['glob'], except: [] },
      permissionMode: 'dont_ask',
      secrets: [],
    });
    expect(p.tools).not.toContain('glob');
    expect(p.tools).toContain('read');
  });
});

/** What a vendor CLI's own settings say about each of its tool names, compiled from a policy. */
const settingsRefuse: Record<VendorCli, (tools: string[], vendorName: string, row: ToolRow) => boolean> = {
  claude: (tools, name) => compileClaudePolicy({ tools, permissionMode: 'dont_ask' }).deny.includes(name),
  gemini: (tools, name) => compileGeminiPolicy({ tools, permissionMode: 'dont_ask' }).deny.includes(name),
  // Codex has no per-tool deny rules: a withheld shell is a shell it does not offer; its other tools are refused by the
  // hook.
  codex: (tools, _name, row) =>
    row.name === 'shell'
      ? compileCodexPolicy({ tools, permissionMode: 'dont_ask' }).features.shell_tool === false
      : false,
};

/** The fleet tools reach a vendor CLI as MCP tools: withheld ones are left out of (or denied in) its MCP settings. */
function mcpOffered(cli: VendorCli, tools: string[], tool: string): boolean {
  switch (cli) {
    case 'claude':
      return !compileClaudePolicy({ tools, permissionMode: 'dont_ask' }).deny.includes(`mcp__flotilla__${tool}`);
    case 'codex':
      return compileCodexPolicy({ tools, permissionMode: 'dont_ask' }).fleetTools.includes(tool);
    case 'gemini':
      return compileGeminiPolicy({ tools, permissionMode: 'dont_ask' }).fleetTools.includes(tool);
  }
}

/** A pre-tool hook payload for `vendorName`, as the CLI sends it. */
function hookDecision(runtime: Runtime, vendorName: string, tools: string[]): 'refused' | 'left to the CLI' {
  const call = runtime.toolCall({ tool_name: vendorName, tool_input: { command: 'ls' } });
  const rec = { effectivePolicy: { tools, permissionMode: 'dont_ask' as const, secrets: [] } };
  return call && toolRefusal(call, rec) ? 'refused' : 'left to the CLI';
}

describe.each(VENDOR_CLIS)('runtime %s: withholding a canonical tool withholds its own tools', (cli) => {
  const vendorRows = rows.filter((r) => r.vendor[cli].length > 0 && r.group !== 'secrets');
  const mcpRows = rows.filter((r) => r.mcp);

  it.each(['exec', 'read', 'write'] as const)(
    "class %s: every name of the CLI's own is refused by its settings or its hook, and allowed when granted",
    async (klass) => {
      const runtime = await loadRuntime(cli);
      const ofClass = vendorRows.filter((r) => r.class === klass);
      if (cli === 'codex' && klass === 'read') {
        // Codex reads through its shell: no read tool of its own to withhold.
        expect(ofClass).toEqual([]);
        return;
      }
      expect(ofClass.length).toBeGreaterThan(0);
      for (const row of ofClass) {
        const without = ALL_TOOLS.filter((t) => t !== row.name);
        for (const name of row.vendor[cli]) {
          const refused = settingsRefuse[cli](without, name, row) || hookDecision(runtime, name, without) === 'refused';
          expect({ tool: row.name, name, refused }).toEqual({ tool: row.name, name, refused: true });
          expect({
            tool: row.name,
            name,
            granted:
              !settingsRefuse[cli](ALL_TOOLS, name, row) &&
              hookDecision(runtime, name, ALL_TOOLS) === 'left to the CLI',
          }).toEqual({ tool: row.name, name, granted: true });
        }
      }
    },
  );

  it('class fleet: a withheld fleet tool is not offered over MCP and its hook refuses it; a granted one is offered', async () => {
    const runtime = await loadRuntime(cli);
    for (const row of mcpRows) {
      const without = ALL_TOOLS.filter((t) => t !== row.name);
      expect({ tool: row.name, offered: mcpOffered(cli, without, row.name) }).toEqual({
        tool: row.name,
        offered: false,
      });
      expect({ tool: row.name, offered: mcpOffered(cli, ALL_TOOLS, row.name) }).toEqual({
        tool: row.name,
        offered: true,
      });
      expect(hookDecision(runtime, runtime.mcpToolPrefix + row.name, without)).toBe('refused');
    }
  });

  it('the deny rules are the same in every permission mode', () => {
    if (cli === 'codex') return;
    const compile = cli === 'claude' ? compileClaudePolicy : compileGeminiPolicy;
    const denies = PERMISSION_MODES.map((m) => compile({ tools: ['read'], permissionMode: m }).deny);
    for (const d of denies) expect(d).toEqual(denies[0]);
  });
});

describe('gemini: its directory listing and multi-file read go with glob and read', () => {
  it('withholding glob denies list_directory; withholding read denies read_many_files', () => {
    const deny = compileGeminiPolicy({
      tools: ALL_TOOLS.filter((t) => t !== 'glob' && t !== 'read'),
      permissionMode: 'dont_ask',
    }).deny;
    expect(deny).toEqual(expect.arrayContaining(['glob', 'list_directory', 'read_file', 'read_many_files']));
    expect(deny).not.toContain('grep_search');
  });
});
