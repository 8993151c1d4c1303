import type { ToolClass } from './permission-mode.js';

/**
 * The one table of tools (docs/design.md §6, §7, §13). Every list of tool names is derived
 * from it: the canonical ids policy compares (tool-names.ts), the names a definition may use
 * for them, each vendor CLI's own tools that policy applies to (runtimes/), the fleet tools
 * a vendor CLI reaches through `flotilla mcp`, and what `flotilla mcp` offers (mcp/tools.ts).
 * A new tool is one row here, its own file in src/tools/ and its line in src/tools/registry.ts
 * (CONTRIBUTING.md, "A tool").
 */

/** Where a tool's work happens: the agent's folder, the fleet (other agents, mail), the secret broker. */
export type ToolGroup = 'workspace' | 'fleet' | 'secrets';

/**
 * The vendor CLIs with tool names of their own (runtimes/; test/policy/tool-table.test.ts keeps the two lists equal).
 */
export const VENDOR_CLIS = ['claude', 'codex', 'gemini'] as const;
export type VendorCli = (typeof VENDOR_CLIS)[number];

export interface ToolRow {
  /** Canonical id: what policy, the audit and the harness's own model call it. */
  name: string;
  /** What it may do, for permission modes (`read` never asks; `write`, `exec` may). */
  class: ToolClass;
  group: ToolGroup;
  /**
   * Each vendor CLI's own tools that are this tool, the name its model calls first. Withholding
   * the tool withholds every one of them; a CLI with none here has no such tool of its own
   * (the fleet tools reach it through `flotilla mcp` when `mcp` is true).
   */
  vendor: Readonly<Record<VendorCli, readonly string[]>>;
  /**
   * Claude Code's names for it beyond its current tools (older `MultiEdit`, `LS`; sub-agent `Task`): definitions and
   * hook matchers use them.
   */
  claudeAliases: readonly string[];
  /**
   * Other agent tools' names for it (OpenCode's `bash`, Gemini's older `search_file_content`): definitions use them.
   */
  otherAliases: readonly string[];
  /** Offered over MCP by `flotilla mcp`: to any MCP client, and to vendor CLIs as the fleet tools. */
  mcp: boolean;
}

const none = { claude: [], codex: [], gemini: [] } as const;

export const TOOL_TABLE = [
  {
    name: 'shell',
    class: 'exec',
    group: 'workspace',
    mcp: false,
    // Codex: `exec_command` and `write_stdin` (unified exec), `shell_command`; its hooks call any of them `Bash`.
    vendor: {
      claude: ['Bash'],
      codex: ['exec_command', 'write_stdin', 'shell_command', 'Bash'],
      gemini: ['run_shell_command'],
    },
    claudeAliases: [],
    otherAliases: ['bash'],
  },
  {
    name: 'read',
    class: 'read',
    group: 'workspace',
    mcp: false,
    vendor: { claude: ['Read'], codex: [], gemini: ['read_file', 'read_many_files'] },
    claudeAliases: [],
    otherAliases: [],
  },
  {
    name: 'write',
    class: 'write',
    group: 'workspace',
    mcp: false,
    // Codex's `apply_patch` creates, rewrites and deletes files: it is `write`, the wider of the two file tools.
    vendor: { claude: ['Write'], codex: ['apply_patch'], gemini: ['write_file'] },
    claudeAliases: [],
    otherAliases: [],
  },
  {
    name: 'edit',
    class: 'write',
    group: 'workspace',
    mcp: false,
    vendor: { claude: ['Edit'], codex: [], gemini: ['replace'] },
    // Granting `NotebookEdit` as `edit` would widen an allow list from notebook cells to every file: not an alias.
    claudeAliases: ['MultiEdit'],
    otherAliases: ['patch'],
  },
  {
    name: 'glob',
    class: 'read',
    group: 'workspace',
    mcp: false,
    // Listing a directory is a glob of one level.
    vendor: { claude: ['Glob'], codex: [], gemini: ['glob', 'list_directory'] },
    claudeAliases: ['LS'],
    otherAliases: ['list'],
  },
  {
    name: 'grep',
    class: 'read',
    group: 'workspace',
    mcp: false,
    vendor: { claude: ['Grep'], codex: [], gemini: ['grep_search'] },
    claudeAliases: [],
    otherAliases: ['search_file_content'],
  },
  {
    name: 'send_message',
    class: 'fleet',
    group: 'fleet',
    mcp: true,
    vendor: none,
    claudeAliases: ['SendMessage'],
    otherAliases: [],
  },
  { name: 'check_inbox', class: 'read', group: 'fleet', mcp: true, vendor: none, claudeAliases: [], otherAliases: [] },
  // Claude Code's sub-agent tools start an agent: here that is `spawn_agent` (in a vendor CLI they stay denied,
  // runtimes/).
  {
    name: 'spawn_agent',
    class: 'fleet',
    group: 'fleet',
    mcp: true,
    vendor: none,
    claudeAliases: ['Task', 'Agent'],
    otherAliases: [],
  },
  { name: 'list_agents', class: 'read', group: 'fleet', mcp: true, vendor: none, claudeAliases: [], otherAliases: [] },
  {
    name: 'wait_for_agents',
    class: 'fleet',
    group: 'fleet',
    mcp: true,
    vendor: none,
    claudeAliases: [],
    otherAliases: [],
  },
  {
    name: 'cancel_agent',
    class: 'fleet',
    group: 'fleet',
    mcp: true,
    vendor: none,
    claudeAliases: [],
    otherAliases: [],
  },
  // A lead takes its descendants' worktree branches (§12), as `flotilla merge` does. `write`: it can move the
  // person's checked-out branch and the files there, so default mode asks first.
  { name: 'merge_work', class: 'write', group: 'fleet', mcp: true, vendor: none, claudeAliases: [], otherAliases: [] },
  // File leases (docs/design.md §16): write and edit take them on their own; this one is for many files or the shell.
  { name: 'lease_paths', class: 'fleet', group: 'fleet', mcp: true, vendor: none, claudeAliases: [], otherAliases: [] },
  // The task board (§15). Claude Code's agent-team tools are the same operations: a Claude-style definition listing
  // them gets these.
  {
    name: 'task_create',
    class: 'fleet',
    group: 'fleet',
    mcp: true,
    vendor: none,
    claudeAliases: ['TaskCreate'],
    otherAliases: [],
  },
  {
    name: 'task_list',
    class: 'read',
    group: 'fleet',
    mcp: true,
    vendor: none,
    claudeAliases: ['TaskList'],
    otherAliases: [],
  },
  { name: 'task_claim', class: 'fleet', group: 'fleet', mcp: true, vendor: none, claudeAliases: [], otherAliases: [] },
  {
    name: 'task_update',
    class: 'fleet',
    group: 'fleet',
    mcp: true,
    vendor: none,
    claudeAliases: ['TaskUpdate'],
    otherAliases: [],
  },
  {
    name: 'wait_for_tasks',
    class: 'fleet',
    group: 'fleet',
    mcp: true,
    vendor: none,
    claudeAliases: [],
    otherAliases: [],
  },
  {
    name: 'request_secret',
    class: 'fleet',
    group: 'secrets',
    mcp: false,
    vendor: none,
    claudeAliases: [],
    otherAliases: [],
  },
] as const satisfies readonly ToolRow[];

export type CanonicalTool = (typeof TOOL_TABLE)[number]['name'];

export function toolRow(name: string): ToolRow | undefined {
  return (TOOL_TABLE as readonly ToolRow[]).find((r) => r.name === name);
}

/** The names of the rows that pass `keep`, in table order. */
export function toolNamesWhere(keep: (row: ToolRow) => boolean): string[] {
  return (TOOL_TABLE as readonly ToolRow[]).filter(keep).map((r) => r.name);
}

/** The fleet tools a vendor CLI reaches through `flotilla mcp` (its own tools are `vendorToolNames`). */
export const MCP_FLEET_TOOLS: readonly string[] = toolNamesWhere((r) => r.mcp);

/** A vendor CLI's own tools for one canonical tool; [] when it has none. */
export function vendorToolNames(cli: VendorCli, tool: string): readonly string[] {
  return toolRow(tool)?.vendor[cli] ?? [];
}

/** Canonical → the name the vendor CLI's model calls, for the tools the CLI has. */
export function vendorPrimaryNames(cli: VendorCli): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const r of TOOL_TABLE as readonly ToolRow[]) if (r.vendor[cli][0]) out[r.name] = r.vendor[cli][0];
  return Object.freeze(out);
}

/** The canonical tool a vendor CLI's own tool name stands for; undefined for a name not in the table. */
export function canonicalOfVendorTool(cli: VendorCli, vendorName: string): string | undefined {
  return (TOOL_TABLE as readonly ToolRow[]).find((r) => r.vendor[cli].includes(vendorName))?.name;
}
