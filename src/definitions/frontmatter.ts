import { createRequire } from 'node:module';
import { parse as parseYaml } from 'yaml';
import { errorMessage } from '../errors.js';
import type { FieldIssue } from './types.js';

/**
 * Splits a definition file into frontmatter and body and parses the frontmatter: `---` YAML,
 * or deprecated `+++` TOML (§7). A `description:` that is not strict YAML — most often
 * unquoted text that itself contains `: ` — is read as plain text with a warning, because
 * the tools people use today accept it; any other field that is not strict YAML is an error
 * naming its line.
 */

export interface ParsedFrontmatter {
  data: Record<string, unknown>;
  body: string;
  warnings: FieldIssue[];
}

export type FrontmatterResult = ({ ok: true } & ParsedFrontmatter) | { ok: false; error: FieldIssue };

/** Fields that are prose, which may be read as plain text when they are not strict YAML. */
const FREE_TEXT: ReadonlySet<string> = new Set(['description']);

const EXAMPLE = "'---' / 'name: reviewer' / 'description: Reviews diffs for bugs' / '---'";

/**
 * The deprecated TOML reader, loaded only for a `+++` file: every spawn and every harness
 * reads definitions, and loading it up front cost each of them ~10 ms of CPU for a form
 * hardly anyone writes (§14 start-up).
 */
function parseToml(raw: string): unknown {
  const toml = createRequire(import.meta.url)('smol-toml') as typeof import('smol-toml');
  return toml.parse(raw);
}

export function parseFrontmatter(text: string): FrontmatterResult {
  const src = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const open = /^(---|\+\+\+)[ \t]*\n/.exec(src);
  if (!open) {
    return fail(
      `no frontmatter: the file must start with a '---' line (frontmatter) — put the fields first, e.g. ${EXAMPLE} then the prompt`,
    );
  }
  const delim = open[1]!;
  const rest = src.slice(open[0].length);
  const close = new RegExp(`^${delim === '---' ? '---' : '\\+\\+\\+'}[ \\t]*$`, 'm').exec(rest);
  if (!close)
    return fail(
      `frontmatter has no closing '${delim}' line (frontmatter) — end the fields with a '${delim}' line, e.g. ${EXAMPLE}`,
    );
  const raw = rest.slice(0, close.index);
  const body = rest
    .slice(close.index + close[0].length)
    .replace(/^\n+/, '')
    .trimEnd();
  const warnings: FieldIssue[] = [];

  let data: unknown;
  if (delim === '+++') {
    warnings.push({
      field: 'frontmatter',
      message: `'+++' TOML frontmatter is deprecated (frontmatter) — rewrite it as '---' YAML, e.g. ${EXAMPLE}`,
    });
    try {
      data = parseToml(raw);
    } catch (err) {
      return fail(
        `frontmatter is not valid TOML: ${firstLine(err)} (frontmatter) — fix the syntax or switch to '---' YAML, e.g. ${EXAMPLE}`,
      );
    }
  } else {
    try {
      data = raw.trim() === '' ? {} : parseYaml(raw);
    } catch (err) {
      const lenient = parseLenient(raw);
      // Only free text may be read as plain text: any other field read that way is a guess
      // (a model string, a tool list) that would load as garbage, so it is an error.
      const guessed = lenient?.plain.find((k) => !FREE_TEXT.has(k));
      if (lenient && guessed !== undefined) {
        const line =
          open[0].split('\n').length -
          1 +
          raw.split('\n').findIndex((l) => new RegExp(`^${guessed}[ \\t]*:`).test(l)) +
          1;
        return fail(
          `frontmatter is not valid YAML at line ${line} ('${guessed}'): ${firstLine(err)} (frontmatter) — fix that line; quote a value that contains ': ' or starts with a special character, e.g. ${guessed}: "…"`,
        );
      }
      const at = (err as { linePos?: { line: number }[] }).linePos?.[0]?.line;
      if (!lenient)
        return fail(
          `frontmatter is not valid YAML${at ? ` at line ${at + 1}` : ''}: ${firstLine(err)} (frontmatter) — write one 'key: value' per line and quote values containing ': ', e.g. description: "Use when: reviewing"`,
        );
      data = lenient.data;
      const keys = lenient.plain.length ? lenient.plain.map((k) => `'${k}'`).join(', ') : 'some lines';
      warnings.push({
        field: 'frontmatter',
        message: `frontmatter is not strict YAML (${firstLine(err)}); read ${keys} as plain text (frontmatter) — quote such values to silence this, e.g. ${lenient.plain[0] ?? 'description'}: "Use when: …"`,
      });
    }
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return fail(
      `frontmatter must be a set of 'key: value' fields, got ${describe(data)} (frontmatter) — e.g. ${EXAMPLE}`,
    );
  }
  return { ok: true, data: data as Record<string, unknown>, body, warnings };
}

/**
 * Reads frontmatter block by block: a line starting a top-level `key:` begins a block, indented
 * lines belong to it. Each block is tried as YAML on its own; a block that still fails is
 * taken as plain text (folded onto one line, surrounding quotes removed). Returns undefined
 * when the text does not look like `key: value` lines at all.
 */
export function parseLenient(raw: string): { data: Record<string, unknown>; plain: string[] } | undefined {
  const blocks: { key: string; lines: string[] }[] = [];
  for (const line of raw.split('\n')) {
    const m = /^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]|$)/.exec(line);
    if (m) blocks.push({ key: m[1]!, lines: [line] });
    else if (blocks.length) blocks[blocks.length - 1]!.lines.push(line);
    else if (line.trim() !== '' && !line.trimStart().startsWith('#')) return undefined;
  }
  if (!blocks.length) return undefined;
  const data: Record<string, unknown> = {};
  const plain: string[] = [];
  for (const { key, lines } of blocks) {
    if (key in data) continue;
    try {
      const parsed: unknown = parseYaml(lines.join('\n'));
      if (typeof parsed === 'object' && parsed !== null && key in parsed) {
        data[key] = (parsed as Record<string, unknown>)[key];
        continue;
      }
    } catch {
      // Not YAML on its own either: fall through to plain text.
    }
    const first = lines[0]!.slice(lines[0]!.indexOf(':') + 1);
    const text = [first, ...lines.slice(1)]
      .map((l) => l.trim())
      .filter(Boolean)
      .join(' ');
    data[key] = unquote(text);
    plain.push(key);
  }
  return { data, plain };
}

function unquote(s: string): string {
  const q = s[0];
  if ((q === '"' || q === "'") && s.length >= 2 && s.endsWith(q)) return s.slice(1, -1);
  return s;
}

function fail(message: string): FrontmatterResult {
  return { ok: false, error: { field: 'frontmatter', message } };
}

function firstLine(err: unknown): string {
  return errorMessage(err).split('\n')[0]!.replace(/:$/, '');
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `'${v.length > 40 ? v.slice(0, 40) + '…' : v}'`;
  return `${String(v)} (${typeof v})`;
}
