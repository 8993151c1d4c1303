import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Fixture processes are plain Node (no TypeScript loader on Node 20), so tests transpile
 * the modules under test — and the relative imports they pull in — into a folder inside the
 * repository's node_modules/.cache, where `zod` still resolves. Fixtures then
 * import `${FLOTILLA_TEST_SRC}/fleet/slots.js`, always the current source, never a stale build.
 */
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export interface CompiledSources {
  /** The transpiled `src/` folder. */
  srcDir: string;
  cleanup(): void;
}

export function compileSources(entries: string[]): CompiledSources {
  const out = join(REPO, 'node_modules', '.cache', 'flotilla-fleet-tests', randomBytes(6).toString('hex'));
  const seen = new Set<string>();
  const queue = entries.map((e) => resolve(REPO, e));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(/from\s+'(\.{1,2}\/[^']+)\.js'/g)) queue.push(resolve(dirname(file), `${m[1]}.ts`));
    const js = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      fileName: file,
    }).outputText;
    const target = join(out, relative(REPO, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, js);
  }
  return { srcDir: join(out, 'src'), cleanup: () => rmSync(out, { recursive: true, force: true }) };
}

export const FIXTURES = join(REPO, 'test', 'fixtures', 'fleet');
