import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkCorpus } from './corpus-checks.js';

/**
 * Claude Code definitions of our own making (test/fixtures/corpus), in the shapes real files
 * take, load through the real CLI (§7). A larger collection of real-world files can be run
 * the same way, opt-in: `FLOTILLA_CORPUS=DIR npm run test:corpus` (test/README.md).
 */
const listing = checkCorpus(fileURLToPath(new URL('../fixtures/corpus', import.meta.url)));

describe('the corpus fixtures, file by file', () => {
  const byName = (n: string) => listing().definitions.find((d) => d.name === n)!;

  it('reads a description that is not strict YAML as plain text, with one warning per such file', () => {
    const ab = byName('ab-review');
    expect(ab.description).toMatch(
      /^Use when someone wants .* Triggers on: 'analyze the test', 'p-value', 'did it work'\.$/,
    );
    expect(ab.effectiveTools).toEqual(['read', 'glob', 'grep']);
    expect(ab.model).toBeUndefined();
    const lenient = listing().warnings.filter((w) => w.message.startsWith('frontmatter is not strict YAML'));
    expect(lenient.map((w) => w.path.split('/').pop()).sort()).toEqual([
      'ab-review.md',
      'migration-planner.md',
      'notebook-tidier.md',
      'release-notes.md',
    ]);
  });

  it('keeps a dot in a name and maps Claude tool names onto ours', () => {
    const sh = byName('shell-5.1-expert');
    expect(sh.effectiveTools).toEqual(['shell', 'read', 'write', 'edit', 'glob', 'grep']);
    expect(sh).toMatchObject({ model: 'sonnet', permissionMode: 'default', maxTurns: 20 });
  });

  it('loads MCP tools with a warning that they are not available here', () => {
    const lit = listing().warnings.filter((w) => w.path.endsWith('/literature-scout.md'));
    expect(lit.map((w) => w.message)).toContainEqual(
      expect.stringContaining("tool 'mcp__papers__search' is not available here"),
    );
    expect(byName('literature-scout').effectiveTools).toEqual(['read']);
  });
});
