import { z } from 'zod';
import { abortable } from '../abort.js';
import { errorMessage, FlotillaError } from '../errors.js';
import { scrubHarnessMarkers } from './scrub.js';
import { truncateHeadTail } from './truncate.js';
import type { Tool, ToolContext, ToolResult } from './types.js';

/**
 * The one wrapper every tool call goes through (CONTRIBUTING.md, "A tool"), whether the
 * agent loop or `flotilla mcp` makes it: validate the input and explain a bad call to the
 * model, ask the policy gate, run the tool raced against the turn's signal, turn anything
 * thrown into an error result, then scrub harness markers and truncate the output head+tail
 * with a hint how to see more. Every failure reads the same way to the model.
 */

export interface RunToolOptions {
  /** Output shown to the model, in UTF-8 bytes (config `tools.max_output_bytes`); unset: no cut. */
  maxOutputBytes?: number;
  /** Asked once the input is valid and before the tool runs (the policy gate); a string is the refusal. */
  admit?: (input: unknown) => Promise<string | undefined>;
}

export interface ToolOutcome {
  result: ToolResult;
  /** Milliseconds spent in the tool itself (0 when it never ran). */
  durationMs: number;
  /** True when the tool's execute ran (PostToolUse hooks only see those). */
  executed: boolean;
}

const GENERIC_HINT = 'Ask for less at a time to see the cut part (narrow the path, pattern or line range).';

export async function runTool<I>(
  tool: Tool<I>,
  rawInput: unknown,
  ctx: ToolContext,
  opts: RunToolOptions = {},
): Promise<ToolResult> {
  return (await runToolOutcome(tool, rawInput, ctx, opts)).result;
}

/** `runTool`, also saying whether the tool ran and for how long (the loop's audit and hooks need both). */
export async function runToolOutcome<I>(
  tool: Tool<I>,
  rawInput: unknown,
  ctx: ToolContext,
  opts: RunToolOptions = {},
): Promise<ToolOutcome> {
  const outcome = await execute(tool, rawInput, ctx, opts);
  const result = outcome.result;
  // check_inbox's output is the harness's own framing, untrusted parts already escaped; errors are scrubbed.
  const scrubbed = tool.framedOutput && !result.isError ? result.output : scrubHarnessMarkers(result.output);
  if (opts.maxOutputBytes === undefined) return { ...outcome, result: { ...result, output: scrubbed } };
  const cut = truncateHeadTail(scrubbed, opts.maxOutputBytes, tool.outputHint ?? GENERIC_HINT);
  if (!cut.truncated) return { ...outcome, result: { ...result, output: cut.text } };
  return {
    ...outcome,
    result: {
      ...result,
      output: cut.text,
      meta: { ...result.meta, truncated: true, outputBytes: cut.originalBytes, omittedBytes: cut.omittedBytes },
    },
  };
}

async function execute<I>(
  tool: Tool<I>,
  rawInput: unknown,
  ctx: ToolContext,
  opts: RunToolOptions,
): Promise<ToolOutcome> {
  const notRun = (output: string, meta: Record<string, unknown>): ToolOutcome => ({
    result: { output, isError: true, meta },
    durationMs: 0,
    executed: false,
  });
  if (ctx.signal.aborted) return notRun(interrupted(tool, ctx.signal), { aborted: true });
  const parsed = tool.inputSchema.safeParse(rawInput);
  if (!parsed.success)
    return notRun(
      `${formatInputError(tool, rawInput, parsed.error)}\nFix the fields above and call '${tool.name}' again.`,
      { invalidInput: true },
    );
  if (opts.admit) {
    const refusal = await opts.admit(parsed.data);
    if (refusal !== undefined)
      return notRun(
        `Tool call denied: ${refusal}. Do not retry the same call; choose another approach or ask for permission.`,
        { denied: true },
      );
  }
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  try {
    // Racing the signal ends the turn on time even if a tool ignores its signal.
    const result = await abortable(tool.execute(parsed.data, ctx), ctx.signal);
    return { result, durationMs: took(), executed: true };
  } catch (err) {
    if (ctx.signal.aborted || isAbortError(err))
      return {
        result: { output: interrupted(tool, ctx.signal), isError: true, meta: { aborted: true } },
        durationMs: took(),
        executed: true,
      };
    const kind = err instanceof FlotillaError ? '' : ' unexpectedly';
    return {
      result: { output: `${tool.name} failed${kind}: ${errorMessage(err)}`, isError: true, meta: { thrown: true } },
      durationMs: took(),
      executed: true,
    };
  }
}

function interrupted(tool: { name: string }, signal: AbortSignal): string {
  const why = signal.reason === undefined ? 'the turn was aborted' : errorMessage(signal.reason);
  return `${tool.name} was interrupted before it finished (${why}).`;
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
function formatInputError<I>(tool: Tool<I>, rawInput: unknown, error: z.ZodError): string {
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
