import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Registration is one line (CONTRIBUTING.md, *A command*): a command is its own
 * file in src/cli/commands/ plus its line in src/cli/registry.ts — nothing else in src/
 * names its module (whether it runs on the fast path is a flag on its own spec: spec.ts).
 */
const src = resolve(import.meta.dirname, '..', '..', 'src');

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

const registry = readFileSync(join(src, 'cli', 'registry.ts'), 'utf8');
/** name → the module file its registry line loads. */
const lines = [...registry.matchAll(/^\s*'?([\w-]+)'?: \(\) => import\('\.\/commands\/([\w-]+)\.js'\),$/gm)].map(
  (m) => ({ name: m[1]!, file: m[2]! }),
);
const outside = sourceFiles(src)
  .filter((f) => !f.startsWith(join(src, 'cli', 'commands') + '/'))
  .map((f) => ({ rel: relative(src, f), text: readFileSync(f, 'utf8') }));

describe('a command is its own file plus one registry line', () => {
  it('the registry lists commands', () => {
    expect(lines.map((l) => l.name)).toContain('merge');
  });

  it.each(lines.map((l) => [l.name, l.file]))('%s: only the registry names its module', (_, file) => {
    const naming = outside.filter((f) => f.text.includes(`commands/${file}.js`)).map((f) => f.rel);
    expect(naming).toEqual(['cli/registry.ts']);
  });

  it('the last command added (merge) touches its own file and one line of the registry', () => {
    const naming = outside.filter((f) => /commands\/merge\.js|new Command\('merge'\)/.test(f.text)).map((f) => f.rel);
    expect(naming).toEqual(['cli/registry.ts']);
    expect(registry.split('\n').filter((l) => l.includes("'./commands/merge.js'"))).toHaveLength(1);
  });
});

/**
 * A tool is its own file plus one registry line (CONTRIBUTING.md, *A tool*): its file under
 * src/tools/ holds its schema, its implementation, its pane line and its system prompt line,
 * and src/tools/registry.ts imports it once. Its row in the tool table
 * (src/policy/tool-table.ts: class, vendor names, MCP) is the one other place it is written,
 * because policy and the vendor runtimes, on lower floors than tools/, read the table. The
 * harness, `flotilla mcp`, the pane and the system prompt read the registry.
 */
const toolsDir = join(src, 'tools');
const toolRegistry = readFileSync(join(toolsDir, 'registry.ts'), 'utf8');
/** Each registry import: the spec's export name and its module file. */
const toolLines = [...toolRegistry.matchAll(/^import \{ (\w+) \} from '\.\/([\w-]+)\.js';$/gm)].map((m) => {
  const file = `tools/${m[2]!}.ts`;
  const text = readFileSync(join(src, file), 'utf8');
  const name = new RegExp(`export const ${m[1]!}: ToolSpec = \\{\\s*name: '(\\w+)'`).exec(text)?.[1];
  return { spec: m[1]!, file, name: name ?? `(no spec ${m[1]!} in ${file})` };
});
const table = readFileSync(join(src, 'policy', 'tool-table.ts'), 'utf8');
const tableNames = [...table.matchAll(/^ {2}\{\s*name: '(\w+)'/gm)].map((m) => m[1]!);

/** The string and template texts of a file's code, comments left out. */
function codeTexts(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isStringLiteralLike(n) || ts.isTemplateLiteralToken(n)) out.push(n.text);
    if (ts.isTemplateExpression(n)) out.push(n.head.text, ...n.templateSpans.map((s) => s.literal.text));
    ts.forEachChild(n, visit);
  };
  visit(file);
  return out;
}
const all = sourceFiles(src).map((f) => ({
  rel: relative(src, f),
  texts: codeTexts(f),
  code: readFileSync(f, 'utf8'),
}));

/**
 * Files besides a tool's own and its table row that name it in code, each with its reason:
 * policy deciding on it, prose telling a model or a person to call it. Nothing here builds,
 * shows or offers the tool.
 */
const NAMED_ELSEWHERE: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  shell: {
    'harness/build-tools.ts': 'granted secrets are lent to shell commands only (§11)',
    'harness/gate.ts': 'the shell gate judges a command line (§7)',
    'harness/cli-host/hook.ts': "a vendor CLI's shell call meets the same gate",
    'runtimes/codex.ts': "Codex's own shell setting follows the policy",
    'transcript/format.ts': "a transcript shows a shell call, ours or a vendor CLI's, as `$ command`",
  },
  read: {
    'harness/read-scope.ts': 'the read scope: which files a read, glob or grep call looks at (§11)',
    'harness/cli-host/read-scope.ts': "the read scope of a vendor CLI's read, glob and grep",
    'runtimes/claude.ts': 'the permission class `read`, not the tool',
  },
  write: {
    'harness/cli-host/lease-check.ts': "a vendor CLI's file changes take leases too (§16)",
    'policy/permission-mode.ts': 'the permission class `write`, not the tool',
    'policy/shell/deny.ts': "a shell rule's kind `write`, not the tool",
  },
  edit: {
    'harness/cli-host/lease-check.ts': "a vendor CLI's file changes take leases too (§16)",
    'runtimes/gemini.ts': "Gemini's edit confirmation is shown as our edit",
  },
  glob: {
    'harness/read-scope.ts': 'the read scope (§11)',
    'harness/cli-host/read-scope.ts': "the read scope of a vendor CLI's calls",
  },
  grep: {
    'harness/read-scope.ts': 'the read scope (§11)',
    'harness/cli-host/read-scope.ts': "the read scope of a vendor CLI's calls",
  },
  send_message: {
    'cli/commands/mcp.ts': '`flotilla mcp --help` names the fleet tools it serves',
    'leases/view.ts': 'a lease refusal tells the model whom to message',
    'lifecycle/broadcast.ts': 'a refused broadcast is audited under the tool that asked',
    'tools/protected-paths.ts': 'a refused write into the fleet root points to messages instead',
  },
  check_inbox: { 'cli/commands/mcp.ts': '`flotilla mcp --help` names the fleet tools it serves' },
  spawn_agent: {
    'cli/commands/mcp.ts': '`flotilla mcp --help` names the fleet tools it serves',
    'definitions/normalize-tools.ts': "a definition error's corrected example",
    'harness/system-prompt.ts': 'the delegation section is for an agent that may spawn',
  },
  list_agents: {
    'spawn/ops.ts': 'a refused cancel tells the model where to see its agents',
    'spawn/far-ops.ts': 'a refused cancel tells the model where to see its agents',
    'tools/spawn-agent.ts': "spawn_agent's prompt lines name the tools that follow a spawn",
  },
  wait_for_agents: { 'tools/spawn-agent.ts': "spawn_agent's answer and prompt lines say how to wait" },
  cancel_agent: { 'tools/spawn-agent.ts': "spawn_agent's prompt lines name the tools that follow a spawn" },
  merge_work: {},
  lease_paths: { 'leases/view.ts': 'a lease refusal tells the model how to wait in line' },
  task_create: {},
  task_list: { 'tools/task-claim.ts': 'a refused claim tells the model where to see the board' },
  task_claim: {},
  task_update: { 'tools/task-claim.ts': 'a claimed task tells the model how to finish it' },
  wait_for_tasks: {},
  request_secret: {
    'approvals/answer.ts': "a person's answer to a secret request is audited under the tool",
    'harness/secret-broker.ts': 'the broker audits requests under the tool',
    'policy/tool-policy.ts': 'a definition with secrets keeps request_secret under an allow list (§11)',
    'watch/gather.ts': 'the dashboard shows waiting secret requests under the tool',
  },
};

/** The files of src/ that import a value (not only types) from `file`. */
function valueImporters(file: string): string[] {
  const target = join(src, file).replace(/\.ts$/, '.js');
  return all
    .filter((f) => {
      const parsed = ts.createSourceFile(f.rel, f.code, ts.ScriptTarget.Latest, false);
      return parsed.statements.some((st) => {
        if (!ts.isImportDeclaration(st) && !ts.isExportDeclaration(st)) return false;
        const spec = st.moduleSpecifier;
        if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) return false;
        if (resolve(dirname(join(src, f.rel)), spec.text) !== target) return false;
        if (ts.isExportDeclaration(st)) return !st.isTypeOnly;
        const clause = st.importClause;
        if (!clause || clause.isTypeOnly) return !clause;
        const named = clause.namedBindings;
        const typesOnly =
          !clause.name && !!named && ts.isNamedImports(named) && named.elements.every((e) => e.isTypeOnly);
        return !typesOnly;
      });
    })
    .map((f) => f.rel);
}

/**
 * Where code names a tool: any text for a fleet tool's own word; a comparison for a workspace tool, whose name is also
 * a plain word.
 */
function namingFiles(name: string): string[] {
  if (name.includes('_')) {
    const word = new RegExp(`\\b${name}\\b`);
    return all.filter((f) => f.texts.some((t) => word.test(t))).map((f) => f.rel);
  }
  const compared = new RegExp(
    `(===|!==)\\s*'${name}'|case '${name}':|\\.(has|includes)\\('${name}'\\)|name: '${name}'`,
  );
  return all.filter((f) => compared.test(f.code)).map((f) => f.rel);
}

describe('a tool is its own file plus one registry line', () => {
  it("the registry lists every row of the tool table, in the table's order", () => {
    expect(toolLines.map((t) => t.name)).toEqual(tableNames);
  });

  it.each(toolLines.map((t) => [t.name, t]))('%s: only the registry imports its module', (_, t) => {
    // Its operations' types may be imported by the rooms that implement them; its values only by the registry.
    expect(valueImporters(t.file)).toEqual(['tools/registry.ts']);
    expect(toolRegistry.split('\n').filter((l) => l.includes(`'./${basename(t.file, '.ts')}.js'`))).toHaveLength(1);
    expect(all.filter((f) => f.rel !== t.file && new RegExp(`\\b${t.spec}\\b`).test(f.code)).map((f) => f.rel)).toEqual(
      ['tools/registry.ts'],
    );
  });

  it.each(toolLines.map((t) => [t.name, t]))('%s: named in code by its own file and its table row only', (name, t) => {
    const elsewhere = Object.keys(NAMED_ELSEWHERE[name] ?? {});
    expect(namingFiles(name).sort()).toEqual([t.file, 'policy/tool-table.ts', ...elsewhere].sort());
  });

  it('the last tool added (merge_work) is named by its own file and its table row, and nothing else', () => {
    expect(namingFiles('merge_work').sort()).toEqual(['policy/tool-table.ts', 'tools/merge-work.ts']);
    expect(Object.keys(NAMED_ELSEWHERE.merge_work!)).toEqual([]);
  });
});
