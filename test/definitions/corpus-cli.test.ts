import { cpSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/**
 * Every real-world Claude Code definition in the shared corpus loads through the real CLI
 * (§7). The corpus sits beside the repository: `<repo>/../shared/corpus/claude-agents`.
 */
const CORPUS = fileURLToPath(new URL('../../../shared/corpus/claude-agents', import.meta.url));
const files = readdirSync(CORPUS).filter((f) => f.endsWith('.md')).sort();

interface Listed {
  name: string;
  description: string;
  model?: string;
  tools: { allow: string[] | null; deny: string[]; except: string[] };
  body: string;
  scope: string;
  path: string;
}

/** An independent reading of the simple `key: value` frontmatter these files use. */
function readIndependently(file: string): { name: string; description: string; model?: string; tools: string[]; body: string } {
  const text = readFileSync(join(CORPUS, file), 'utf8');
  const lines = text.split('\n');
  expect(lines[0]).toBe('---');
  const close = lines.indexOf('---', 1);
  const fields: Record<string, string> = {};
  for (const line of lines.slice(1, close)) {
    const at = line.indexOf(':');
    let value = line.slice(at + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    fields[line.slice(0, at)] = value;
  }
  return {
    name: fields.name!,
    description: fields.description!,
    ...(fields.model ? { model: fields.model } : {}),
    tools: fields.tools!.split(',').map((t) => t.trim()),
    body: lines.slice(close + 1).join('\n').trim(),
  };
}

let fleet: TempFleet;
let listed: { definitions: Listed[]; errors: unknown[]; warnings: { path: string; message: string }[] };

beforeAll(async () => {
  fleet = tempFleet('flotilla-corpus-');
  mkdirSync(join(fleet.project, '.git'));
  const dir = join(fleet.project, '.claude', 'agents');
  mkdirSync(dir, { recursive: true });
  for (const f of files) cpSync(join(CORPUS, f), join(dir, f));
  const home = join(fleet.project, 'home');
  const r = await flotilla(['agents', 'list', '--json'], { cwd: fleet.project, env: { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg'), FLOTILLA_ROOT: '' } });
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  listed = JSON.parse(String(r.stdout)) as typeof listed;
});
afterAll(() => fleet.cleanup());

describe('the Claude Code corpus through `flotilla agents list --json`', () => {
  it('finds the corpus and loads every file, none skipped', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(listed.errors).toEqual([]);
    const fromCorpus = listed.definitions.filter((d) => d.scope === 'claude-project');
    expect(fromCorpus).toHaveLength(files.length);
    expect(fromCorpus.map((d) => d.path.split('/').pop()).sort()).toEqual(files);
  });

  it.each(files)('%s: name, description, tools, model and body', (file) => {
    const want = readIndependently(file);
    const got = listed.definitions.find((d) => d.path.endsWith(`/${file}`));
    expect(got).toBeDefined();
    expect(got!.name).toBe(want.name);
    expect(got!.description).toBe(want.description);
    expect(got!.tools).toEqual({ allow: want.tools, deny: [], except: [] });
    expect(got!.model).toBe(want.model);
    expect(got!.body).toBe(want.body);
    expect(got!.body.length).toBeGreaterThan(0);
  });

  it('cross-checks specific files', () => {
    const byName = (n: string) => listed.definitions.find((d) => d.name === n)! as Listed & { effectiveTools: string[]; permissionMode: string; maxTurns: number };
    // Not strict YAML: "Triggers on: '…'" inside an unquoted description.
    const ab = byName('ab-test-analysis');
    expect(ab.description).toMatch(/^Use when the user wants to analyze A\/B test results, .* Triggers on: 'analyze A\/B test', .*'did it work'\.$/);
    expect(ab.effectiveTools).toEqual(['read', 'glob', 'grep']);
    expect(ab.model).toBeUndefined();
    expect(ab.body.startsWith('You are an expert statistician')).toBe(true);
    // A dot in the name, as Claude Code allows.
    const ps = byName('powershell-5.1-expert');
    expect(ps.effectiveTools).toEqual(['shell', 'read', 'write', 'edit', 'glob', 'grep']);
    expect(ps).toMatchObject({ model: 'sonnet', permissionMode: 'default', maxTurns: 20 });
    // MCP tools load with a warning that they are not available here.
    const lit = listed.warnings.filter((w) => w.path.endsWith('/scientific-literature-researcher.md'));
    expect(lit.map((w) => w.message)).toContainEqual(expect.stringContaining("tool 'mcp__bgpt__search_papers' is not available here"));
    expect(listed.warnings.filter((w) => w.message.startsWith('frontmatter is not strict YAML'))).toHaveLength(8);
  });
});
