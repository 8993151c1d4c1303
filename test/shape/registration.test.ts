import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
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
