import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * No hand-written unit past what a reader holds (CONTRIBUTING.md, "How the code reads"):
 * no file in src/ over 400 lines, no function over 100. A file past that holds two things; a
 * function past that mixes concerns. Generated files (`*.generated.ts`) are written by tools and
 * exempt. The lists below are today's offenders, each to be split and struck off; a new one fails.
 */
const src = resolve(import.meta.dirname, '..', '..', 'src');
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 100;

/** Files still over the limit: to be split by concept, then removed from here. */
const LONG_FILES: readonly string[] = [];

/** Functions still over the limit (`file name`): to be split, then removed from here. */
const LONG_FUNCTIONS: readonly string[] = [];

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (/\.tsx?$/.test(name) && !/\.generated\.tsx?$/.test(name) && !/\.d\.ts$/.test(name)) out.push(path);
  }
  return out;
}

function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

/** A function's name as a reader finds it: its own, the variable or property it is, `Class.method`. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  const own = node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) ? node.name.text : undefined;
  const parent = node.parent;
  if (ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) || ts.isAccessor(node)) {
    const cls = ts.isClassLike(parent) && parent.name ? `${parent.name.text}.` : '';
    return `${cls}${ts.isConstructorDeclaration(node) ? 'constructor' : (own ?? '?')}`;
  }
  if (own) return own;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent) && (ts.isIdentifier(parent.name) || ts.isStringLiteral(parent.name)))
    return parent.name.text;
  if (ts.isPropertyDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  // A callback: named by the call it is passed to, inside the function that makes that call.
  let outer: ts.Node = parent;
  while (!ts.isSourceFile(outer) && !ts.isFunctionLike(outer)) outer = outer.parent;
  const within = ts.isFunctionLike(outer) ? `${nameOf(outer as ts.FunctionLikeDeclaration)} ` : '';
  const callee =
    ts.isCallExpression(parent) && ts.isPropertyAccessExpression(parent.expression)
      ? `.${parent.expression.name.text}()`
      : ts.isCallExpression(parent) && ts.isIdentifier(parent.expression)
        ? `${parent.expression.text}()`
        : '(anonymous)';
  return `${within}${callee}`;
}

/** `file name (N lines)` of every function in src/ longer than the limit, outermost and nested alike. */
function longFunctions(): { key: string; lines: number }[] {
  const out: { key: string; lines: number }[] = [];
  for (const file of sourceFiles(src)) {
    const text = readFileSync(file, 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const fn = node as ts.FunctionLikeDeclaration;
        const start = sf.getLineAndCharacterOfPosition(fn.getStart(sf)).line;
        const end = sf.getLineAndCharacterOfPosition(fn.getEnd()).line;
        const lines = end - start + 1;
        if (lines > MAX_FUNCTION_LINES) out.push({ key: `${relative(src, file)} ${nameOf(fn)}`, lines });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

describe('no hand-written unit in src/ past what a reader holds', () => {
  const files = sourceFiles(src).map((f) => ({
    file: relative(src, f),
    lines: lineCount(readFileSync(f, 'utf8')),
  }));

  it(`no file over ${MAX_FILE_LINES} lines but the listed ones`, () => {
    const long = files.filter((f) => f.lines > MAX_FILE_LINES);
    expect(long.filter((f) => !LONG_FILES.includes(f.file)).map((f) => `${f.file} (${f.lines} lines)`)).toEqual([]);
  });

  it('every listed file is still long (strike it off once split)', () => {
    const lines = new Map(files.map((f) => [f.file, f.lines]));
    expect(LONG_FILES.filter((f) => (lines.get(f) ?? 0) <= MAX_FILE_LINES)).toEqual([]);
  });

  const fns = longFunctions();

  it(`no function over ${MAX_FUNCTION_LINES} lines but the listed ones`, () => {
    expect(fns.filter((f) => !LONG_FUNCTIONS.includes(f.key)).map((f) => `${f.key} (${f.lines} lines)`)).toEqual([]);
  });

  it('every listed function is still long (strike it off once split)', () => {
    const keys = new Set(fns.map((f) => f.key));
    expect(LONG_FUNCTIONS.filter((k) => !keys.has(k))).toEqual([]);
  });
});
