import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

export interface Listed {
  name: string;
  description: string;
  model?: string;
  tools: { allow: string[] | null; deny: string[]; except: string[] };
  body: string;
  scope: string;
  path: string;
  effectiveTools: string[];
  permissionMode: string;
  maxTurns: number;
}

export interface Listing {
  definitions: Listed[];
  errors: unknown[];
  warnings: { path: string; message: string }[];
}

/** An independent reading of the simple `key: value` frontmatter Claude Code files use. */
function readIndependently(path: string): {
  name: string;
  description: string;
  model?: string;
  tools: string[];
  body: string;
} {
  const lines = readFileSync(path, 'utf8').split('\n');
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
    body: lines
      .slice(close + 1)
      .join('\n')
      .trim(),
  };
}

/**
 * Every Claude Code definition in `dir` loads through the real CLI (§7), as a person's
 * `.claude/agents/` would: copied into a fresh project with a fresh HOME, then listed with
 * `flotilla agents list --json` and compared with an independent reading of each file.
 * Returns a getter for the listing, for checks of particular files.
 */
export function checkCorpus(dir: string): () => Listing {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .sort();
  let fleet: TempFleet;
  let listed: Listing;

  beforeAll(async () => {
    fleet = tempFleet('flotilla-corpus-');
    execFileSync('git', ['init', '-q', fleet.project]);
    const agents = join(fleet.project, '.claude', 'agents');
    mkdirSync(agents, { recursive: true });
    for (const f of files) cpSync(join(dir, f), join(agents, f));
    const home = join(fleet.project, 'home');
    const r = await flotilla(['agents', 'list', '--json'], {
      cwd: fleet.project,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg'), FLOTILLA_ROOT: '' },
    });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    listed = JSON.parse(String(r.stdout)) as Listing;
  });
  afterAll(() => fleet.cleanup());

  describe(`the Claude Code definitions in ${dir} through \`flotilla agents list --json\``, () => {
    it('finds every file and loads it, none skipped', () => {
      expect(files.length).toBeGreaterThan(0);
      expect(listed.errors).toEqual([]);
      const fromCorpus = listed.definitions.filter((d) => d.scope === 'claude-project');
      expect(fromCorpus).toHaveLength(files.length);
      expect(fromCorpus.map((d) => d.path.split('/').pop()).sort()).toEqual(files);
    });

    it.each(files)('%s: name, description, tools, model and body', (file) => {
      const want = readIndependently(join(dir, file));
      const got = listed.definitions.find((d) => d.path.endsWith(`/${file}`));
      expect(got).toBeDefined();
      expect(got!.name).toBe(want.name);
      expect(got!.description).toBe(want.description);
      expect(got!.tools).toEqual({ allow: want.tools, deny: [], except: [] });
      expect(got!.model).toBe(want.model);
      expect(got!.body).toBe(want.body);
      expect(got!.body.length).toBeGreaterThan(0);
    });
  });
  return () => listed;
}
