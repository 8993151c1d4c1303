import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * No export that nothing in src/ uses: dead code reads as live, and a reader follows it for
 * nothing. An export counts as used when code in src/ refers to it — by import, re-export,
 * a property of a dynamically imported module, or inside its own file. Only what KEPT lists
 * may go unused here, each with its reason.
 */
const src = resolve(import.meta.dirname, '..', '..', 'src');

/** Loaded by path, not by name: the CLI's registry imports each command's module and reads it. */
const ENTRY_POINTS: readonly [RegExp, readonly string[], string][] = [
  [
    /^cli\/commands\/[^/]+\.ts$/,
    ['command', 'spec', 'run', 'fast'],
    'a command module, loaded by src/cli/registry.ts with import() and read as a CommandModule',
  ],
  [/^cli\/fast\/[^/]+\.ts$/, ['run'], 'a fast-path bundle entry (tools/build-cli.mjs), required by src/cli/main.ts'],
];

/** Exports that only tests, benches or build tools use, kept on purpose: `file name` → why. */
const KEPT: Readonly<Record<string, string>> = {
  'secrets/redact.ts redactDeep': 'test/secrets checks redaction of nested values through it',
  'audit/audit.ts closeAudit': 'tests and bench/audit-bus.mjs flush the audit log before reading it',
  'config/schema.ts defaultConfig': 'tests and benches build a config without reading files',
  'config/schema.ts ConfigInput': 'test/model types partial configs with it',
  'hosts/hosts.ts allHosts': 'test/hosts checks the host list with it',
  'spawn/budget.ts treeBudgetRefusal': 'test/fleet checks the tree budget refusal directly',
  'watch/format.ts rowText': 'dashboard tests read a row as text',
  'watch/paint.ts plainLine': 'dashboard tests read painted lines without colour',
  'transcript/format.ts formatTranscript': 'test/transcript checks the whole formatted transcript',
  'cli/fast.ts fastRun': "tools/build-cli.mjs writes each fast command's bundle entry, which runs it",
  'cli/chunk.ts chunkModule': "tools/build-cli.mjs points each fast bundle's @nats-io/* and zod imports at it",
  'cli/compile-cache.ts writeSeed': "tools/build-cli.mjs writes each bundle's code cache seed with it",
  'cli/registry.ts fastRoutes': "tools/build-cli.mjs reads the commands' fast flags through it, when it builds main.js",
};

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (/\.ts$/.test(name)) out.push(path);
  }
  return out;
}

/** `file name` of every export of src/ that nothing in src/ refers to. */
function unusedExports(): string[] {
  const files = sourceFiles(src);
  // Only src/'s own modules are resolved (packages stay unresolved): what matters is who uses whom here.
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    lib: ['lib.es2022.d.ts'],
    types: [],
  };
  const host = ts.createCompilerHost(options);
  host.resolveModuleNameLiterals = (literals, containing) =>
    literals.map((l) =>
      l.text.startsWith('.')
        ? {
            resolvedModule: {
              resolvedFileName: join(containing, '..', l.text).replace(/\.js$/, '.ts'),
              extension: ts.Extension.Ts,
              isExternalLibraryImport: false,
            },
          }
        : { resolvedModule: undefined },
    );
  const program = ts.createProgram(files, options, host);
  const checker = program.getTypeChecker();
  // By declaration: a property of a union (a module or a fallback) is a symbol of its own.
  const used = new Set<ts.Declaration>();
  const original = (s: ts.Symbol): ts.Symbol => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
  const mark = (s: ts.Symbol | undefined, at: ts.Node) => {
    if (!s) return;
    // A declaration's own name is not a use of it.
    const decl = s.declarations?.some((d) => (d as ts.NamedDeclaration).name === at);
    if (!decl) for (const d of [...(s.declarations ?? []), ...(original(s).declarations ?? [])]) used.add(d);
  };
  for (const sf of program.getSourceFiles()) {
    if (!sf.fileName.startsWith(src)) continue;
    const visit = (node: ts.Node): void => {
      // `const { name } = await import('./x.js')`: the property of the module's type.
      if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
        const name = node.propertyName ?? node.name;
        if (ts.isIdentifier(name)) mark(checker.getTypeAtLocation(node.parent).getProperty(name.text), name);
      }
      if (ts.isIdentifier(node)) mark(checker.getSymbolAtLocation(node), node);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  const unused: string[] = [];
  for (const sf of program.getSourceFiles()) {
    if (!sf.fileName.startsWith(src)) continue;
    const rel = relative(src, sf.fileName).split('\\').join('/');
    const module = checker.getSymbolAtLocation(sf);
    for (const e of module ? checker.getExportsOfModule(module) : []) {
      const target = original(e);
      // Re-exports are judged where they are declared.
      if (!target.declarations?.some((d) => d.getSourceFile() === sf)) continue;
      if (target.declarations?.some((d) => used.has(d))) continue;
      if (ENTRY_POINTS.some(([file, names]) => file.test(rel) && names.includes(e.name))) continue;
      unused.push(`${rel} ${e.name}`);
    }
  }
  return unused.sort();
}

describe('every export of src/ is used in src/', () => {
  const unused = unusedExports();
  it('no export is used by nothing in src/ (delete it, or say in KEPT why it stays)', () => {
    expect(unused.filter((u) => !(u in KEPT))).toEqual([]);
  });
  it('KEPT lists only exports that are still unused in src/', () => {
    expect(Object.keys(KEPT).filter((k) => !unused.includes(k))).toEqual([]);
  });
});
