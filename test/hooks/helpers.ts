import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Compiles a few source files (type-stripped by TypeScript itself) into `outDir` under the
 * same relative paths, so a plain `node` child process can import the real code without a
 * build of the whole tree.
 */
export function transpileForChild(files: readonly string[], outDir: string): void {
  writeFileSync(join(outDir, 'package.json'), '{"type":"module"}\n');
  for (const file of files) {
    const source = readFileSync(join(REPO, file), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      fileName: file,
    });
    const out = join(outDir, file.replace(/\.ts$/, '.js'));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, outputText);
  }
}

/** True while `pid` is a running process (a zombie waiting to be reaped counts as gone). */
export function isRunning(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (existsSync('/proc/self/stat')) {
    try {
      const text = readFileSync(stat, 'utf8');
      // The state letter follows the parenthesised command name, which may itself hold spaces.
      return text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
