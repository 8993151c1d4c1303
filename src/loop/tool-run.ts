import { abortable } from '../abort.js';
import { errorMessage } from '../errors.js';
import { runToolOutcome, type ToolOutcome } from '../tools/run-tool.js';
import type { Tool, ToolCall, ToolContext } from '../tools/types.js';
import type { ModelToolCall } from './model-call.js';
import type { GateDecision, LoopOptions } from './types.js';

/**
 * One tool call as the model made it. What is wrong with the call itself (input that is not
 * JSON, a tool it was not given) is answered here; everything else — validation, the policy
 * gate, running, errors, scrubbing, truncation — is the one tool wrapper, `runTool`.
 */

export type { ToolOutcome };

export async function runToolCall(
  mc: ModelToolCall,
  tools: readonly Tool[],
  opts: Pick<LoopOptions, 'gate' | 'maxOutputBytes'>,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const call: ToolCall = { id: mc.id, name: mc.name, input: mc.input };
  const notRun = (output: string): ToolOutcome => ({
    result: { output, isError: true },
    durationMs: 0,
    executed: false,
  });

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
  const gate = opts.gate;
  return runToolOutcome(tool, mc.input, ctx, {
    ...(opts.maxOutputBytes !== undefined ? { maxOutputBytes: opts.maxOutputBytes } : {}),
    // Approvals may wait for a person; Ctrl-C or a timeout must not wait with them.
    ...(gate
      ? {
          admit: async () => {
            const d = await gated({ gate }, call, tool, ctx.signal);
            return d.allow ? undefined : d.reason;
          },
        }
      : {}),
  });
}

/** Asks the gate; a stopped turn answers for it, so an unanswered approval never blocks Ctrl-C. */
async function gated(
  opts: Pick<LoopOptions, 'gate'>,
  call: ToolCall,
  tool: Tool | undefined,
  signal: AbortSignal,
): Promise<GateDecision> {
  try {
    return await abortable(opts.gate!(call, tool, signal), signal);
  } catch (err) {
    if (signal.aborted)
      return { allow: false, reason: `the turn was stopped before approval (${errorMessage(signal.reason)})` };
    throw err;
  }
}

function clip(s: string, max = 500): string {
  return s.length <= max ? s : `${s.slice(0, max)}… (${s.length} chars)`;
}
