import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { FieldChild, ShellParser, SyntaxNode } from '../policy/shell/syntax.js';
import type { TreeCursor } from 'web-tree-sitter';
import { createShellClassifier, type ShellClassifier } from '../policy/shell/classify.js';
import { globToRegExp } from '../policy/shell/deny.js';

/**
 * Loads the bash grammar for the shell gate: tree-sitter-bash's WebAssembly build through
 * web-tree-sitter, both shipped in node_modules (nothing downloads). Loaded once per process,
 * on the first shell command, so `flotilla status`/`send` and a harness that never runs a
 * shell command never pay for it (§14). docs/decisions.md says why this grammar.
 */

let loading: Promise<ShellParser> | undefined;

export function loadShellParser(): Promise<ShellParser> {
  loading ??= (async () => {
    // Baseline WebAssembly code only. By default V8 goes on compiling optimized code for the
    // grammar on background threads, and a process cannot exit until they are done: a harness
    // that had run one shell command took 4–12 s to exit on a busy machine, 0.4 s with this
    // (docs/benchmarks.md). Parsing one command needs no optimized code.
    setFlagsFromString('--liftoff-only');
    const { Parser, Language } = await import('web-tree-sitter');
    await Parser.init();
    const require = createRequire(import.meta.url);
    const language = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    const parser = new Parser();
    parser.setLanguage(language);
    return {
      parse(source) {
        const tree = parser.parse(source);
        if (!tree) throw new Error('the bash grammar returned no tree');
        // One cursor walk copies the tree into plain objects: the gate visits nodes several
        // times, and every visit of a WebAssembly node crosses into the module.
        try {
          return { root: copyTree(tree.walk(), source), dispose: () => undefined };
        } finally {
          tree.delete();
        }
      },
    };
  })();
  // A failed load is retried on the next call rather than remembered.
  loading.catch(() => (loading = undefined));
  return loading;
}

/** The shell gate for one deny list, with command-name globs resolved against the file system. */
export async function loadShellClassifier(
  denyList: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<ShellClassifier> {
  const parser = await loadShellParser();
  return createShellClassifier(parser, denyList, {
    expandCommandGlob: (pattern) => expandCommandGlob(pattern, env.PATH ?? ''),
  });
}

/** `/usr/bin/s?do` → the files it names; `s?do` → the matching names on PATH. */
export function expandCommandGlob(pattern: string, path: string): string[] {
  const slash = pattern.lastIndexOf('/');
  const dirs = slash === -1 ? path.split(delimiter).filter(Boolean) : [pattern.slice(0, slash) || '/'];
  // A pattern in the directory part is not expanded; its basename still is matched.
  const re = globToRegExp(pattern.slice(slash + 1));
  const out: string[] = [];
  for (const dir of dirs) {
    if (/[*?[]/.test(dir)) continue;
    try {
      for (const name of readdirSync(dir)) if (re.test(name)) out.push(slash === -1 ? name : join(dir, name));
    } catch {
      /* a missing PATH entry names nothing */
    }
    if (out.length > 64) break;
  }
  return out;
}

class PlainNode implements SyntaxNode {
  readonly kids: PlainNode[] = [];
  readonly fieldNames: (string | null)[] = [];
  hasError: boolean;
  private fieldList: FieldChild[] | undefined;

  constructor(
    private readonly source: string,
    readonly type: string,
    readonly isNamed: boolean,
    readonly isMissing: boolean,
    readonly startIndex: number,
    readonly endIndex: number,
  ) {
    this.hasError = type === 'ERROR' || isMissing;
  }

  get text(): string {
    return this.source.slice(this.startIndex, this.endIndex);
  }
  get childCount(): number {
    return this.kids.length;
  }
  child(index: number): SyntaxNode | null {
    return this.kids[index] ?? null;
  }
  fieldNameForChild(index: number): string | null {
    return this.fieldNames[index] ?? null;
  }
  get children(): readonly SyntaxNode[] {
    return this.kids;
  }
  get fields(): readonly FieldChild[] {
    return (this.fieldList ??= this.kids.map((node, i) => ({ field: this.fieldNames[i] ?? null, node })));
  }
}

const nodeTypes = new Map<number, { name: string; named: boolean }>();

function copyTree(cursor: TreeCursor, source: string): PlainNode {
  try {
    // Every cursor getter is a call into the module: a type's name and whether it is named are
    // asked once per type, and only an empty node can be one the parser inserted (missing).
    const make = () => {
      const id = cursor.nodeTypeId;
      const start = cursor.startIndex;
      const end = cursor.endIndex;
      let type = nodeTypes.get(id);
      if (!type) nodeTypes.set(id, (type = { name: cursor.nodeType, named: cursor.nodeIsNamed }));
      return new PlainNode(source, type.name, type.named, start === end && cursor.nodeIsMissing, start, end);
    };
    const root = make();
    const stack: PlainNode[] = [root];
    let more = cursor.gotoFirstChild();
    while (more) {
      const node = make();
      const parent = stack[stack.length - 1]!;
      parent.kids.push(node);
      parent.fieldNames.push(cursor.currentFieldName);
      if (cursor.gotoFirstChild()) {
        stack.push(node);
        continue;
      }
      // Up until a node has a next sibling; the stack follows the cursor.
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent() || (stack.pop(), stack.length === 0)) {
          more = false;
          break;
        }
      }
    }
    markErrors(root);
    return root;
  } finally {
    cursor.delete();
  }
}

function markErrors(node: PlainNode): boolean {
  for (const k of node.kids) if (markErrors(k)) node.hasError = true;
  return node.hasError;
}
