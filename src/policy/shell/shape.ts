import { children, descendants, fields, type SyntaxNode } from './syntax.js';

/** Node types and literal words, whitespace-free, function names numbered: for structural deny patterns. */
export function canonicalShape(root: SyntaxNode, source: string): string {
  const names = new Map<string, string>();
  for (const n of descendants(root)) {
    if (n.type === 'function_definition') {
      const name = fields(n).find((f) => f.field === 'name')?.node.text;
      if (name && !names.has(name)) names.set(name, `F${names.size}`);
    }
  }
  const out: string[] = [];
  const visit = (n: SyntaxNode): void => {
    if (n.type === 'comment') return;
    if (n.childCount === 0 || n.type === 'word' || n.type === 'raw_string') {
      const text = n.text;
      out.push(names.get(text) ?? (n.isNamed ? `${n.type}:${text}` : text));
      return;
    }
    out.push(`(${n.type}`);
    for (const c of children(n)) visit(c);
    out.push(')');
  };
  visit(root);
  void source;
  return out.join(' ');
}
