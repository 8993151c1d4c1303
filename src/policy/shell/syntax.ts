/**
 * The slice of a bash syntax tree the shell gate reads. The harness hands policy a parser
 * (tree-sitter-bash through web-tree-sitter, src/harness/shell-parser.ts) whose nodes fit
 * this shape; policy itself never loads a grammar or touches a file.
 */

export interface SyntaxNode {
  readonly type: string;
  readonly text: string;
  readonly isNamed: boolean;
  readonly childCount: number;
  /** Offsets into the parsed source, in UTF-16 code units. */
  readonly startIndex: number;
  readonly endIndex: number;
  /** True for a node the grammar could not place (an `ERROR`) or inserted to recover (`MISSING`). */
  readonly hasError: boolean;
  readonly isMissing: boolean;
  child(index: number): SyntaxNode | null;
  fieldNameForChild(index: number): string | null;
  /** A parser that keeps its nodes in memory may hand these over whole: the gate reads them on every visit. */
  readonly children?: readonly SyntaxNode[];
  readonly fields?: readonly FieldChild[];
}

export interface ParsedShell {
  readonly root: SyntaxNode;
  /** Frees the tree (tree-sitter trees live in WebAssembly memory). */
  dispose(): void;
}

/** Parses one bash command line. */
export interface ShellParser {
  parse(source: string): ParsedShell;
}

export function children(node: SyntaxNode): readonly SyntaxNode[] {
  if (node.children) return node.children;
  const out: SyntaxNode[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i);
    if (c) out.push(c);
  }
  return out;
}

export interface FieldChild {
  readonly field: string | null;
  readonly node: SyntaxNode;
}

/** Children with the field each was given (`name`, `argument`, `redirect`, `body`, …). */
export function fields(node: SyntaxNode): readonly FieldChild[] {
  if (node.fields) return node.fields;
  const out: FieldChild[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const c = node.child(i);
    if (c) out.push({ field: node.fieldNameForChild(i), node: c });
  }
  return out;
}

/** Depth-first, the node itself first. */
export function descendants(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  const stack: SyntaxNode[] = [node];
  while (stack.length) {
    const n = stack.pop()!;
    out.push(n);
    const kids = children(n);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  return out;
}
