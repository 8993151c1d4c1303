import { errorMessage } from '../errors.js';
import { formatInputError } from '../tools/run-tool.js';
import { scrubHarnessMarkers } from '../tools/scrub.js';
import type { Tool, ToolCall, ToolContext, ToolResult } from '../tools/types.js';
import { abortable } from './abort.js';
import type { ModelToolCall } from './model-call.js';
import type { GateDecision, LoopOptions } from './types.js';

/**
 * Runs one tool call the way the model should experience it: every failure (bad JSON, an
 * unknown tool, input that does not fit the schema, a policy denial, a thrown error) comes
 * back as an error result that says what was received and how to fix it.
 */

export interface ToolOutcome {
  result: ToolResult;
  /** Milliseconds spent in the tool itself (0 when it never ran). */
  durationMs: number;
  /** True when the tool's execute ran (PostToolUse hooks only see those). */
  executed: boolean;
}

export async function runToolCall(
  mc: ModelToolCall,
  tools: readonly Tool[],
  opts: Pick<LoopOptions, 'gate'>,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const call: ToolCall = { id: mc.id, name: mc.name, input: mc.input };
  const notRun = (output: string): ToolOutcome => ({ result: { output, isError: true }, durationMs: 0, executed: false });

  if (mc.parseError !== undefined) {
    return notRun(
      `Your input for '${mc.name}' was not valid JSON (${mc.parseError}). Received: ${clip(String(mc.input))}\n` +
        `Send the input as one JSON object that matches the tool's schema.`,
    );
  }
  const tool = tools.find((t) => t.name === mc.name);
  if (!tool) {
    // The gate still hears about it: a call to a tool the agent was not given is a policy event (§7).
    const decision = opts.gate ? await gated(opts, call, undefined, ctx.signal) : { allow: true as const };
    const names = tools.map((t) => t.name).join(', ') || '(none)';
    const why = decision.allow ? '' : ` (${decision.reason})`;
    return notRun(`Unknown tool '${mc.name}'${why}. Available tools: ${names}. Call one of these by its exact name.`);
  }

  const parsed = tool.inputSchema.safeParse(mc.input);
  if (!parsed.success) {
    // The one writer of input errors for the model (field by field, the fields, an example).
    return notRun(`${formatInputError(tool, mc.input, parsed.error)}\nFix the fields above and call '${tool.name}' again.`);
  }

  if (opts.gate) {
    // Approvals may wait for a person; Ctrl-C or a timeout must not wait with them.
    const decision = await gated(opts, call, tool, ctx.signal);
    if (!decision.allow) return notRun(`Tool call denied: ${scrubHarnessMarkers(decision.reason)}. Do not retry the same call; choose another approach or ask for permission.`);
  }

  const started = performance.now();
  try {
    // Racing the signal ends the turn on time even if a tool ignores its signal.
    const result = await abortable(tool.execute(parsed.data, ctx), ctx.signal);
    return { result, durationMs: Math.round(performance.now() - started), executed: true };
  } catch (err) {
    const output = ctx.signal.aborted
      ? `Tool '${tool.name}' was interrupted: ${errorMessage(ctx.signal.reason)}`
      : `Tool '${tool.name}' failed: ${scrubHarnessMarkers(errorMessage(err))}`;
    return { result: { output, isError: true }, durationMs: Math.round(performance.now() - started), executed: true };
  }
}

/** Asks the gate; a stopped turn answers for it, so an unanswered approval never blocks Ctrl-C. */
async function gated(opts: Pick<LoopOptions, 'gate'>, call: ToolCall, tool: Tool | undefined, signal: AbortSignal): Promise<GateDecision> {
  try {
    return await abortable(opts.gate!(call, tool, signal), signal);
  } catch (err) {
    if (signal.aborted) return { allow: false, reason: `the turn was stopped before approval (${errorMessage(signal.reason)})` };
    throw err;
  }
}


function clip(s: string, max = 500): string {
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length} chars)`;
}
