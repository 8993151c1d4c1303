#!/usr/bin/env node
// Generates zod-free validators for the hot records from their zod schemas (docs/decisions.md, "Cost against the
// fleet's history"):
// building zod's schemas at import was ~30 ms of every `flotilla status`. zod stays the single
// source of truth: this walks the schema's definition and writes plain checks with zod's
// meaning (unknown keys stripped, or refused by a strict object; defaults filled; the same
// constraints; a refinement called by its name in the target's table). A kind of schema it
// does not know is an error here, never a silently weaker check. A test per target fails when
// the generated file is stale and compares both on valid and invalid input (TARGETS names it).
//   npm run build && node tools/gen-validators.mjs        (rewrites the files below)
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * The generated files: [module with the schema, export name, output file, function name, type name, test, and
 * optionally what else the file holds: `refinements`, [module, export] of the named functions the schema's
 * `.refine()` calls use; `leaves`, [module of `leaves` (src/config/walk.ts), name] to export the schema's keys as].
 */
export const TARGETS = [
  [
    'fleet/record-schema.js',
    'agentRecordSchema',
    'src/fleet/record-validate.generated.ts',
    'parseAgentRecord',
    'AgentRecord',
    'test/fleet/validators.unit.test.ts',
  ],
  // `flotilla send` and every inbox reader check messages with this one: zod is too slow to load on every send.
  // `spawn` and `gc` read transcript sidecars for retention, over the whole history.
  [
    'transcript/meta-schema.js',
    'transcriptMetaSchema',
    'src/transcript/meta-validate.generated.ts',
    'parseTranscriptMeta',
    'TranscriptMeta',
    'test/transcript/meta-validate.unit.test.ts',
  ],
  [
    'inbox/message-schema.js',
    'messageHeaderSchema',
    'src/inbox/message-validate.generated.ts',
    'parseMessageHeader',
    'MessageHeader',
    'test/inbox/message-validate.unit.test.ts',
  ],
  // Every spawn and a person's first command in a new fleet read the config before its cache is
  // written; zod was ~60 ms of that read (docs/benchmarks-runtimes.md). Its refinements are
  // named functions (src/config/refinements.ts), and the read also needs the schema's keys.
  [
    'config/schema.js',
    'configSchema',
    'src/config/config-validate.generated.ts',
    'parseConfig',
    'Config',
    'test/config/validate.unit.test.ts',
    { refinements: ['config/refinements.js', 'CONFIG_REFINEMENTS'], leaves: ['config/walk.js', 'CONFIG_LEAVES'] },
  ],
];

const def = (schema) => schema._zod.def;

/** TypeScript source of a validator for `schema`. */
export function generateValidator(
  schema,
  fnName,
  typeName,
  typeModule,
  testFile = TARGETS.find((t) => t[3] === fnName)?.[5],
  extra = {},
) {
  // extra.refinements: { module, name, table } (the named functions); extra.leaves: { module, name, items }.
  let usesRefinements = false;
  // With refinements, a failed check (a pattern, a bound, an unknown key) is marked soft: zod still runs a
  // refinement over it, and skips one only over a wrong type. The fields blamed then agree with zod's.
  const soft = extra.refinements ? ', soft: true' : '';
  let usesPlainObject = false;
  /** A refinement's call, by the name it has in the table: a function not there cannot be copied. */
  const refinement = (cd) => {
    const entry = Object.entries(extra.refinements?.table ?? {}).find(([, fn]) => fn === cd.fn);
    if (!entry)
      throw new Error(
        "gen-validators: a .refine() whose function is not in the target's refinements table — name it there",
      );
    usesRefinements = true;
    return `${extra.refinements.name}.${entry[0]}`;
  };
  const fns = [];
  const patterns = new Map();
  let n = 0;
  /** A module-level constant for each distinct pattern, so it is built once. */
  const pattern = (re) => {
    if (re.global || re.sticky) throw new Error('gen-validators: a global or sticky pattern keeps state between tests');
    const text = re.toString();
    if (!patterns.has(text)) patterns.set(text, `re${patterns.size}`);
    return patterns.get(text);
  };
  /** The schema author's message for a check (zod keeps a string as a function returning it). */
  const customMessage = (cd, fallback) => {
    const m = typeof cd.error === 'function' ? cd.error({}) : undefined;
    return typeof m === 'string' ? m : fallback;
  };
  const formatCheck = (cd) => {
    if (!(cd.pattern instanceof RegExp))
      throw new Error(`gen-validators: string format '${cd.format}' has no pattern — teach tools/gen-validators.mjs`);
    const message = customMessage(
      cd,
      cd.format === 'regex' ? 'does not match the required pattern' : `expected an ISO ${cd.format}`,
    );
    return `  if (!${pattern(cd.pattern)}.test(v as string)) bad.push({ path: p, message: ${lit(message)}${soft} });`;
  };
  const lit = (v) => JSON.stringify(v);
  // One function per distinct body: a union's branches repeat the same fields, and each copy was
  // source and code cache that every `flotilla send` read (§14). Bodies name only functions
  // emitted before them, so equal bodies check the same.
  const byBody = new Map();
  const emit = (body) => {
    if (byBody.has(body)) return byBody.get(body);
    const name = `v${n++}`;
    byBody.set(body, name);
    fns.push(`function ${name}(v: unknown, p: string, bad: Issue[]): unknown {\n${body}\n}`);
    return name;
  };
  const checks = (d, kind) => {
    const out = [];
    for (const c of d.checks ?? []) {
      const cd = c._zod.def;
      if (kind === 'string' && cd.check === 'string_format') out.push(formatCheck(cd));
      else if (kind === 'string' && cd.check === 'max_length')
        out.push(
          `  if ((v as string).length > ${cd.maximum}) bad.push({ path: p, message: 'too long: at most ${cd.maximum} characters'${soft} });`,
        );
      else if (kind === 'string' && cd.check === 'min_length')
        out.push(
          `  if ((v as string).length < ${cd.minimum}) bad.push({ path: p, message: 'too short: at least ${cd.minimum} characters'${soft} });`,
        );
      else if (kind === 'string' && cd.check === 'custom')
        out.push(
          `  if (!${refinement(cd)}(v as string)) bad.push({ path: p, message: ${lit(customMessage(cd, 'invalid'))}${soft} });`,
        );
      else if (kind === 'number' && cd.check === 'number_format' && cd.format === 'safeint')
        out.push(`  if (!Number.isSafeInteger(v)) bad.push({ path: p, message: 'expected an integer'${soft} });`);
      else if (kind === 'number' && cd.check === 'greater_than')
        out.push(
          `  if (!((v as number) ${cd.inclusive ? '>=' : '>'} ${lit(cd.value)})) bad.push({ path: p, message: 'too small: expected ${cd.inclusive ? '>=' : '>'}${cd.value}'${soft} });`,
        );
      else if (kind === 'number' && cd.check === 'less_than')
        out.push(
          `  if (!((v as number) ${cd.inclusive ? '<=' : '<'} ${lit(cd.value)})) bad.push({ path: p, message: 'too big: expected ${cd.inclusive ? '<=' : '<'}${cd.value}'${soft} });`,
        );
      else
        throw new Error(
          `gen-validators: unsupported ${kind} check '${cd.check}' — teach tools/gen-validators.mjs, or keep this schema off the hot path`,
        );
    }
    return out.length ? `${out.join('\n')}\n` : '';
  };
  const walk = (schema) => {
    const d = def(schema);
    switch (d.type) {
      case 'object': {
        // A strict object (.strict()) has the catchall never: any key it does not name is an issue.
        const strict = d.catchall && def(d.catchall).type === 'never';
        if (d.catchall && !strict) throw new Error('gen-validators: objects with a catchall are not supported');
        const refines = (d.checks ?? []).map((c) => {
          if (c._zod.def.check !== 'custom')
            throw new Error(
              `gen-validators: unsupported object check '${c._zod.def.check}' — teach tools/gen-validators.mjs`,
            );
          return c._zod.def;
        });
        const lines = [
          "  if (typeof v !== 'object' || v === null || Array.isArray(v)) { bad.push({ path: p, message: 'expected an object' }); return v; }",
          '  const o = v as Record<string, unknown>;',
          '  const out: Record<string, unknown> = {};',
        ];
        if (refines.length) lines.push('  const before = bad.length;');
        for (const [key, child] of Object.entries(d.shape)) {
          const f = walk(child);
          lines.push(
            `  { const r = ${f}(o[${lit(key)}], p + ${lit('.' + key)}, bad); if (r !== undefined) out[${lit(key)}] = r; }`,
          );
        }
        if (strict)
          lines.push(
            `  for (const k in o) if (!${lit(Object.keys(d.shape))}.includes(k)) bad.push({ path: p, message: 'unknown key ' + k${soft} });`,
          );
        // zod runs a refinement on the parsed object unless an issue inside it is a wrong type (not a failed check).
        for (const cd of refines)
          lines.push(
            `  if (bad.slice(before).every((i) => i.soft) && !${refinement(cd)}(out as never)) bad.push({ path: p, message: ${lit(customMessage(cd, 'invalid'))}${soft} });`,
          );
        lines.push('  return out;');
        return emit(lines.join('\n'));
      }
      case 'record': {
        // As zod's: a plain object, each own enumerable key checked, then its value; __proto__ is skipped.
        if (def(d.keyType).type !== 'string')
          throw new Error('gen-validators: only records with string keys are supported');
        if (d.checks?.length) throw new Error('gen-validators: record checks are not supported');
        usesPlainObject = true;
        const k = walk(d.keyType);
        const f = walk(d.valueType);
        return emit(
          [
            "  if (!isPlainObject(v)) { bad.push({ path: p, message: 'expected an object' }); return v; }",
            '  const out: Record<string, unknown> = {};',
            '  for (const key of Reflect.ownKeys(v)) {',
            "    if (key === '__proto__' || !Object.prototype.propertyIsEnumerable.call(v, key)) continue;",
            '    const before = bad.length;',
            "    if (typeof key !== 'string') { bad.push({ path: p, message: 'expected string keys' }); continue; }",
            `    ${k}(key, p + '.' + key, bad);`,
            // A bad key is zod's invalid_key, which no refinement runs over, whatever failed inside it.
            `    if (bad.length > before) { ${soft ? 'for (const i of bad.slice(before)) i.soft = false; ' : ''}continue; }`,
            `    out[key] = ${f}(v[key], p + '.' + key, bad);`,
            '  }',
            '  return out;',
          ].join('\n'),
        );
      }
      case 'string': {
        // A format type (z.iso.datetime()) is a string that is also its own check.
        const own = d.check === 'string_format' ? `${formatCheck(d)}\n` : '';
        return emit(
          `  if (typeof v !== 'string') { bad.push({ path: p, message: 'expected a string' }); return v; }\n${own}${checks(d, 'string')}  return v;`,
        );
      }
      case 'number':
        return emit(
          `  if (typeof v !== 'number' || !Number.isFinite(v)) { bad.push({ path: p, message: 'expected a number' }); return v; }\n${checks(d, 'number')}  return v;`,
        );
      case 'boolean':
        return emit(`  if (typeof v !== 'boolean') bad.push({ path: p, message: 'expected a boolean' });\n  return v;`);
      case 'literal':
        return emit(
          `  if (!(${lit(d.values)} as unknown[]).includes(v)) bad.push({ path: p, message: ${lit('expected ' + d.values.map((x) => JSON.stringify(x)).join(' or '))} });\n  return v;`,
        );
      case 'enum': {
        const values = Object.values(d.entries);
        return emit(
          `  if (!(${lit(values)} as unknown[]).includes(v)) bad.push({ path: p, message: ${lit('expected one of ' + values.join(', '))} });\n  return v;`,
        );
      }
      case 'nullable': {
        const f = walk(d.innerType);
        return emit(`  return v === null ? null : ${f}(v, p, bad);`);
      }
      case 'optional': {
        const f = walk(d.innerType);
        return emit(`  return v === undefined ? undefined : ${f}(v, p, bad);`);
      }
      case 'default': {
        const f = walk(d.innerType);
        // zod fills a default without validating it; a fresh copy each time, as zod does for objects.
        return emit(`  return v === undefined ? structuredClone(${lit(d.defaultValue)}) : ${f}(v, p, bad);`);
      }
      case 'prefault': {
        const f = walk(d.innerType);
        // Unlike a default, a prefault is parsed: it goes through the inner schema in place of undefined.
        return emit(`  return ${f}(v === undefined ? structuredClone(${lit(d.defaultValue)}) : v, p, bad);`);
      }
      case 'array': {
        if (d.checks?.length) throw new Error('gen-validators: array checks are not supported');
        const f = walk(d.element);
        return emit(
          `  if (!Array.isArray(v)) { bad.push({ path: p, message: 'expected an array' }); return v; }\n  return Array.from(v, (x, i) => ${f}(x, p + '.' + i, bad));`,
        );
      }
      case 'union': {
        // Only a discriminated union: the discriminator picks the one option that decides.
        if (!d.discriminator) throw new Error('gen-validators: only discriminated unions are supported');
        const key = d.discriminator;
        const lines = [
          "  if (typeof v !== 'object' || v === null || Array.isArray(v)) { bad.push({ path: p, message: 'expected an object' }); return v; }",
          `  switch ((v as Record<string, unknown>)[${lit(key)}]) {`,
        ];
        for (const option of d.options) {
          const od = def(option);
          const tag = od.type === 'object' ? def(od.shape[key]) : undefined;
          if (tag?.type !== 'literal')
            throw new Error(
              'gen-validators: each option of a discriminated union must be an object with a literal discriminator',
            );
          const f = walk(option);
          lines.push(`    ${tag.values.map((x) => `case ${lit(x)}:`).join(' ')} return ${f}(v, p, bad);`);
        }
        const values = d.options.flatMap((o) => def(def(o).shape[key]).values);
        lines.push(
          `    default: bad.push({ path: p + ${lit('.' + key)}, message: ${lit('expected one of ' + values.join(', '))} }); return v;`,
          '  }',
        );
        return emit(lines.join('\n'));
      }
      default:
        throw new Error(
          `gen-validators: unsupported zod type '${d.type}' — teach tools/gen-validators.mjs, or keep this schema off the hot path`,
        );
    }
  };
  const root = walk(schema);
  const sibling = (mod) => `./${mod.split('/').pop()}`;
  // The lint rule is turned off around the patterns only when one names a control character: unused, it warns.
  const consts = [...patterns].map(([text, name]) => `const ${name} = ${text};`).join('\n');
  const patternBlock = /\\x[01][0-9a-f]|\\u00[01][0-9a-f]/i.test(consts)
    ? `// Patterns copied from the schema (a one-line rule may name control characters).\n/* eslint-disable no-control-regex */\n${consts}\n/* eslint-enable no-control-regex */\n`
    : `// Patterns copied from the schema.\n${consts}\n`;
  const imports = [`import type { ${typeName} } from '${sibling(typeModule)}';`];
  if (extra.leaves) imports.push(`import type { KeyLeaf } from '${sibling(extra.leaves.module)}';`);
  if (usesRefinements)
    imports.push(`import { ${extra.refinements.name} } from '${sibling(extra.refinements.module)}';`);
  const plainObject = usesPlainObject
    ? `/** zod's test for a record's input: an object whose constructor, if any, looks like Object's. */
function isPlainObject(o: unknown): o is Record<string | symbol, unknown> {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return false;
  const ctor: unknown = (o as { constructor?: unknown }).constructor;
  if (ctor === undefined || typeof ctor !== 'function') return true;
  const prot: unknown = (ctor as { prototype?: unknown }).prototype;
  if (typeof prot !== 'object' || prot === null || Array.isArray(prot)) return false;
  return Object.prototype.hasOwnProperty.call(prot, 'isPrototypeOf');
}

`
    : '';
  const leafList = extra.leaves
    ? `
/** Every settable key of the schema (${extra.leaves.module.replace(/\.js$/, '.ts')} \`leaves\`), for reading files and \`FLOTILLA_*\`. */
export const ${extra.leaves.name}: readonly KeyLeaf[] = [
${extra.leaves.items.map(({ path, kind, nullable, envName }) => `  ${JSON.stringify({ path, kind, nullable, envName })},`).join('\n')}
];
`
    : '';
  return `// Generated by tools/gen-validators.mjs from the zod schema in ${typeModule.replace(/\.js$/, '.ts')} — do not edit.
// zod is the source of truth; ${testFile} fails when this file is stale.
${imports.join('\n')}

interface Issue {
  path: string;
  message: string;${soft ? '\n  soft?: boolean;' : ''}
}
${patterns.size ? `\n${patternBlock}` : ''}
${plainObject}${fns.join('\n\n')}

/** Same result as \`safeParse\` of the zod schema, without loading zod. */
export function ${fnName}(input: unknown): { success: true; data: ${typeName} } | { success: false; error: { issues: Issue[] } } {
  const bad: Issue[] = [];
  const data = ${root}(input, '', bad);
  if (bad.length > 0) return { success: false, error: { issues: bad.map((i) => ({ path: i.path.slice(1), message: i.message })) } };
  return { success: true, data: data as ${typeName} };
}
${leafList}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const load = (mod) => import(new URL(`../dist/${mod}`, import.meta.url).href);
  for (const [mod, exportName, out, fnName, typeName, testFile, wants = {}] of TARGETS) {
    const m = await load(mod);
    const extra = {};
    if (wants.refinements) {
      const [module, name] = wants.refinements;
      extra.refinements = { module, name, table: (await load(module))[name] };
    }
    if (wants.leaves) {
      const [module, name] = wants.leaves;
      extra.leaves = { module, name, items: (await load(module)).leaves(m[exportName]) };
    }
    writeFileSync(
      new URL(`../${out}`, import.meta.url),
      generateValidator(m[exportName], fnName, typeName, mod, testFile, extra),
    );
    process.stdout.write(`wrote ${out}\n`);
  }
}
