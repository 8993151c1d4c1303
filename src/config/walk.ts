import type { z } from 'zod';

/**
 * Reads the config schema's shape so that `config show`, unknown-key warnings and the
 * `FLOTILLA_*` environment names all come from the one schema.
 */

interface Def {
  type: string;
  innerType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  entries?: Record<string, string>;
  element?: z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** Strips default/prefault/optional/nullable wrappers. */
export function unwrap(schema: z.ZodType): { inner: z.ZodType; nullable: boolean } {
  let s = schema;
  let nullable = false;
  for (;;) {
    const d = defOf(s);
    if (d.type === 'nullable') nullable = true;
    if (d.innerType && ['default', 'prefault', 'optional', 'nullable', 'readonly'].includes(d.type)) {
      s = d.innerType;
      continue;
    }
    return { inner: s, nullable };
  }
}

export type LeafKind = 'string' | 'number' | 'boolean' | 'enum' | 'array' | 'record' | 'other';

export interface Leaf {
  path: string;
  kind: LeafKind;
  nullable: boolean;
  description: string | undefined;
  envName: string;
  choices?: string[];
}

/** Every settable key of the schema (objects are walked; records and arrays are leaves). */
export function leaves(schema: z.ZodType, prefix = ''): Leaf[] {
  const { inner } = unwrap(schema);
  const d = defOf(inner);
  if (d.type !== 'object' || !d.shape) return [];
  const out: Leaf[] = [];
  for (const [key, child] of Object.entries(d.shape)) {
    const path = prefix ? `${prefix}.${key}` : key;
    const { inner: ci, nullable } = unwrap(child);
    const cd = defOf(ci);
    if (cd.type === 'object') {
      out.push(...leaves(child, path));
      continue;
    }
    const kind: LeafKind =
      (['string', 'number', 'boolean', 'enum', 'array', 'record'] as const).find((k) => k === cd.type) ?? 'other';
    out.push({
      path,
      kind,
      nullable,
      description: child.description ?? ci.description,
      envName: 'FLOTILLA_' + path.replace(/\./g, '_').toUpperCase(),
      ...(cd.entries ? { choices: Object.values(cd.entries) } : {}),
    });
  }
  return out;
}

/** What reading the config needs of a key: a `Leaf` without the words `config show` prints. */
export type KeyLeaf = Pick<Leaf, 'path' | 'kind' | 'nullable' | 'envName'>;

/**
 * Keys in `value` that the schema does not know, as dotted paths, from its leaves: a section is
 * a prefix of a leaf and is looked into; a leaf (a record, a list) takes any value.
 */
export function unknownKeys(allLeaves: readonly KeyLeaf[], value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    // No key of the schema holds a dot: one that does is unknown, whatever its dotted path spells.
    if (key.includes('.')) out.push(path);
    else if (allLeaves.some((l) => l.path === path)) continue;
    else if (allLeaves.some((l) => l.path.startsWith(`${path}.`))) out.push(...unknownKeys(allLeaves, v, path));
    else out.push(path);
  }
  return out;
}

export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = obj;
  for (const part of parts.slice(0, -1)) {
    const next = cur[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts.at(-1)!] = value;
}

export function deletePath(obj: Record<string, unknown>, path: string): void {
  const parts = path.split('.');
  let cur: unknown = obj;
  for (const part of parts.slice(0, -1)) {
    if (typeof cur !== 'object' || cur === null) return;
    cur = (cur as Record<string, unknown>)[part];
  }
  if (typeof cur === 'object' && cur !== null) delete (cur as Record<string, unknown>)[parts.at(-1)!];
}
