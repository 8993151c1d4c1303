import { z } from 'zod';
import { errorMessage, FlotillaError } from '../errors.js';
import { scrubHarnessMarkers } from './scrub.js';
import { truncateHeadTail } from './truncate.js';
import type { Tool, ToolContext, ToolResult } from './types.js';

/**
 * The one wrapper every tool call goes through (STYLE 4, opencode `tool/tool.ts`): validate the
 * input and explain a bad call to the model, turn anything thrown into an error result, then
 * scrub harness markers and truncate the output head+tail with a hint how to see more.
 */

export interface RunToolOptions {
  /** Output shown to the model, in UTF-8 bytes (config `tools.max_output_bytes`, default 30000). */
  maxOutputBytes: number;
}

const GENERIC_HINT = 'Ask for less at a time to see the cut part (narrow the path, pattern or line range).';

export async function runTool<I>(tool: Tool<I>, rawInput: unknown, ctx: ToolContext, opts: RunToolOptions): Promise<ToolResult> {
  const result = await execute(tool, rawInput, ctx);
  const cut = truncateHeadTail(scrubHarnessMarkers(result.output), opts.maxOutputBytes, tool.outputHint ?? GENERIC_HINT);
  if (!cut.truncated) return { ...result, output: cut.text };
  return {
    ...result,
    output: cut.text,
    meta: { ...result.meta, truncated: true, outputBytes: cut.originalBytes, omittedBytes: cut.omittedBytes },
  };
}

async function execute<I>(tool: Tool<I>, rawInput: unknown, ctx: ToolContext): Promise<ToolResult> {
  if (ctx.signal.aborted) return cancelled(tool);
  const parsed = tool.inputSchema.safeParse(rawInput);
  if (!parsed.success) {
    return { output: formatInputError(tool, rawInput, parsed.error), isError: true, meta: { invalidInput: true } };
  }
  try {
    return await tool.execute(parsed.data, ctx);
  } catch (err) {
    if (ctx.signal.aborted || isAbortError(err)) return cancelled(tool);
    const kind = err instanceof FlotillaError ? '' : ' unexpectedly';
    return { output: `${tool.name} failed${kind}: ${errorMessage(err)}`, isError: true, meta: { thrown: true } };
  }
}

function cancelled(tool: { name: string }): ToolResult {
  return { output: `${tool.name} was cancelled before it finished (the turn was aborted).`, isError: true, meta: { aborted: true } };
}

function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError';
}

/**
 * The error a model reads after a malformed call: one line per problem naming the field, what
 * was expected and what was received, then the whole input it sent and an example to copy.
 *
 *   Invalid input for read:
 *   - offset: expected number, received string ("10")
 *   You sent: {"path":"a.txt","offset":"10"}
 *   Fields: path (string, required), offset (number), limit (number)
 *   Example: {"path":"src/main.ts","offset":1,"limit":200}
 */
export function formatInputError<I>(tool: Tool<I>, rawInput: unknown, error: z.ZodError): string {
  const lines = [`Invalid input for ${tool.name}:`];
  if (rawInput === null || typeof rawInput !== 'object' || Array.isArray(rawInput)) {
    lines.push(`- expected an object of named arguments, received ${describeType(rawInput)}`);
  } else {
    for (const issue of error.issues) lines.push(`- ${describeIssue(issue, rawInput)}`);
  }
  lines.push(`You sent: ${preview(rawInput, 300)}`);
  const fields = describeFields(tool.inputSchema);
  if (fields) lines.push(`Fields: ${fields}`);
  if (tool.inputExample !== undefined) lines.push(`Example: ${JSON.stringify(tool.inputExample)}`);
  return lines.join('\n');
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const where = issue.path.length ? issue.path.map(String).join('.') : '(arguments)';
  const value = valueAt(input, issue.path);
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return `${where}: required ${issue.expected} is missing`;
      return `${where}: expected ${issue.expected}, received ${describeType(value)} (${preview(value, 60)})`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}; use only the fields listed below`;
    default:
      // zod's own wording is already precise for ranges, enums and formats ("Too small: expected number to be >=1").
      return `${where}: ${issue.message}, received ${preview(value, 60)}`;
  }
}

function describeFields(schema: z.ZodType): string {
  if (!(schema instanceof z.ZodObject)) return '';
  return Object.entries(schema.shape as Record<string, z.ZodType>)
    .map(([key, field]) => `${key} (${typeName(field)}${field.isOptional() ? '' : ', required'})`)
    .join(', ');
}

function typeName(field: z.ZodType): string {
  const inner = field instanceof z.ZodOptional || field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field;
  if (inner instanceof z.ZodEnum) return (inner.options as string[]).map((o) => JSON.stringify(o)).join(' | ');
  return inner.type;
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let v = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function preview(v: unknown, max: number): string {
  const s = v === undefined ? 'undefined' : (JSON.stringify(v) ?? String(v));
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
