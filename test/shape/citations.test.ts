import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { glob } from 'tinyglobby';
import { describe, expect, it } from 'vitest';

/**
 * Comments and test names cite what a person who clones the repository has: CONTRIBUTING.md,
 * docs/design.md §N, docs/decisions.md and the other docs (CONTRIBUTING.md, "Comments"). An
 * issue number, a style guide kept elsewhere or a path on someone's machine means nothing
 * there; this fails when one comes back, naming the file, the line and what to write instead.
 */
const repo = resolve(import.meta.dirname, '..', '..');
const SELF = 'test/shape/citations.test.ts';

const FORBIDDEN: { pattern: RegExp; instead: string }[] = [
  { pattern: /\b[Ii]ssues? ?#?\d+/, instead: 'say the reason, or cite docs/design.md §N or docs/decisions.md' },
  { pattern: /\bSTYLE\b/, instead: 'cite CONTRIBUTING.md ("How the code reads", "A tool", …)' },
  { pattern: /shared\/design|\/work\/(main|wt|shared)\b/, instead: 'cite a file inside the repository' },
];

/** Every line of the repository's code, tests, tools and benchmarks that cites what the repository does not hold. */
export function outsideCitations(files: readonly string[], read: (file: string) => string): string[] {
  const found: string[] = [];
  for (const file of files) {
    read(file)
      .split('\n')
      .forEach((line, i) => {
        for (const { pattern, instead } of FORBIDDEN) {
          const m = pattern.exec(line);
          if (m) found.push(`${file}:${i + 1}: '${m[0]}' — ${instead}`);
        }
      });
  }
  return found;
}

describe('citations stay inside the repository', () => {
  it('no comment, test name or doc in src/, test/, tools/, bench/, docs/ or the top-level pages cites an issue number, STYLE or a path outside the repository', async () => {
    const files = (
      await glob(
        [
          'src/**/*',
          'test/**/*',
          'tools/**/*',
          'bench/**/*',
          'docs/**/*.md',
          'inbox/README.md',
          '*.md',
          '*.ts',
          '*.js',
          '*.mjs',
        ],
        { cwd: repo, onlyFiles: true, ignore: ['**/node_modules/**', 'test/fixtures/corpus/**'] },
      )
    ).filter((f) => f !== SELF && /\.(m?[jt]s|ya?ml|sh|md)$|^tools\/[^./]+$/.test(f));
    expect(files.length).toBeGreaterThan(300);
    expect(outsideCitations(files, (f) => readFileSync(resolve(repo, f), 'utf8'))).toEqual([]);
  });

  it('would catch each kind, and lets a public link and a plain word through', () => {
    const lines: Record<string, string> = {
      'a.ts': [
        '// Turns are per agent (issue 14).',
        ' * (STYLE 4, a wrapper)',
        '// see ..' + '/shared/design/x.md',
        '// Issue 12: the sandbox',
        '// tmux may need a nudge (github.com/tmux/tmux/issues/311)',
        '// styles and issues of layout are fine; §5.2 too',
      ].join('\n'),
    };
    expect(outsideCitations(['a.ts'], (f) => lines[f]!).map((l) => l.split(':')[1])).toEqual(['1', '2', '3', '4']);
  });
});
