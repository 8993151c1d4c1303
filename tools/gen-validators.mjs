#!/usr/bin/env node
// Generates zod-free validators for the hot records from their zod schemas (docs/decisions.md, "Cost against the
// fleet's history"):
// building zod's schemas at import was ~30 ms of every `flotilla status`. zod stays the single
// source of truth: this walks the schema's definition and writes plain checks with zod's
// meaning (unknown keys stripped, defaults filled, the same constraints). A kind of schema it
// does not know is an error here, never a silently weaker check. A test per target fails when
// the generated file is stale and compares both on valid and invalid input (TARGETS names it).
//   npm run build && node tools/gen-validators.mjs        (rewrites the files below)
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** The generated files: [module with the schema, export name, output file, function name, type name, test]. */
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
];

const def = (schema) => schema._zod.def;

/** TypeScript source of a validator for `schema`. */
export function generateValidator(
  schema,
  fnName,
  typeName,
  typeModule,
  testFile = TARGETS.find((t) => t[3] === fnName)?.[5],
) {
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
    return `  if (!${pattern(cd.pattern)}.test(v as string)) bad.push({ path: p, message: ${lit(message)} });`;
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
          `  if ((v as string).length > ${cd.maximum}) bad.push({ path: p, message: 'too long: at most ${cd.maximum} characters' });`,
        );
      else if (kind === 'string' && cd.check === 'min_length')
        out.push(
          `  if ((v as string).length < ${cd.minimum}) bad.push({ path: p, message: 'too short: at least ${cd.minimum} characters' });`,
        );
      else if (kind === 'number' && cd.check === 'number_format' && cd.format === 'safeint')
        out.push(`  if (!Number.isSafeInteger(v)) bad.push({ path: p, message: 'expected an integer' });`);
      else if (kind === 'number' && cd.check === 'greater_than')
        out.push(
          `  if (!((v as number) ${cd.inclusive ? '>=' : '>'} ${lit(cd.value)})) bad.push({ path: p, message: 'too small: expected ${cd.inclusive ? '>=' : '>'}${cd.value}' });`,
        );
      else if (kind === 'number' && cd.check === 'less_than')
        out.push(
          `  if (!((v as number) ${cd.inclusive ? '<=' : '<'} ${lit(cd.value)})) bad.push({ path: p, message: 'too big: expected ${cd.inclusive ? '<=' : '<'}${cd.value}' });`,
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
        if (d.catchall) throw new Error('gen-validators: objects with a catchall are not supported');
        const lines = [
          "  if (typeof v !== 'object' || v === null || Array.isArray(v)) { bad.push({ path: p, message: 'expected an object' }); return v; }",
          '  const o = v as Record<string, unknown>;',
          '  const out: Record<string, unknown> = {};',
        ];
        for (const [key, child] of Object.entries(d.shape)) {
          const f = walk(child);
          lines.push(
            `  { const r = ${f}(o[${lit(key)}], p + ${lit('.' + key)}, bad); if (r !== undefined) out[${lit(key)}] = r; }`,
          );
        }
        lines.push('  return out;');
        return emit(lines.join('\n'));
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
          `  if (!Array.isArray(v)) { bad.push({ path: p, message: 'expected an array' }); return v; }\n  return v.map((x, i) => ${f}(x, p + '.' + i, bad));`,
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
  return `// Generated by tools/gen-validators.mjs from the zod schema in ${typeModule.replace(/\.js$/, '.ts')} — do not edit.
// zod is the source of truth; ${testFile} fails when this file is stale.
import type { ${typeName} } from './${typeModule.split('/').pop()}';

interface Issue {
  path: string;
  message: string;
}
${patterns.size ? '\n// Patterns copied from the schema (a one-line rule may name control characters).\n/* eslint-disable no-control-regex */\n' + [...patterns].map(([text, name]) => `const ${name} = ${text};`).join('\n') + '\n/* eslint-enable no-control-regex */\n' : ''}
${fns.join('\n\n')}

/** Same result as \`safeParse\` of the zod schema, without loading zod. */
export function ${fnName}(input: unknown): { success: true; data: ${typeName} } | { success: false; error: { issues: Issue[] } } {
  const bad: Issue[] = [];
  const data = ${root}(input, '', bad);
  if (bad.length > 0) return { success: false, error: { issues: bad.map((i) => ({ path: i.path.slice(1), message: i.message })) } };
  return { success: true, data: data as ${typeName} };
}
`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const [mod, exportName, out, fnName, typeName, testFile] of TARGETS) {
    const m = await import(new URL(`../dist/${mod}`, import.meta.url).href);
    writeFileSync(
      new URL(`../${out}`, import.meta.url),
      generateValidator(m[exportName], fnName, typeName, mod, testFile),
    );
    process.stdout.write(`wrote ${out}\n`);
  }
}
