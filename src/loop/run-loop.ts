import type { ToolContext, ToolResult } from '../tools/types.js';
import { errorMessage } from '../errors.js';
import { callModel, ReplyBuilder, type ModelReply } from './model-call.js';
import { toModelPrompt, toModelTools } from './prompt.js';
import { runToolCall } from './tool-run.js';
import type { Injection, LoopEvent, LoopOptions, ModelMessage, StopReason, Usage } from './types.js';

/**
 * The agent loop (§6). A turn: one streamed model reply, then its tool calls in order, then
 * any pending injections. It repeats until a reply has no tool calls and nothing is pending
 * (`completed`), or `maxTurns`, `timeoutMs`, the caller's signal, the budget or a model
 * failure ends it. It does no I/O of its own and never throws: the last event is always
 * `done`, whose `messages` can seed the next run (course correction, follow-up, resume).
 */
export async function* runLoop(opts: LoopOptions): AsyncGenerator<LoopEvent> {
  const messages: ModelMessage[] = [...opts.messages];
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let turns = 0;
  let lastText = '';
  const stop = runStop(opts.signal, opts.timeoutMs);

  const done = (reason: StopReason, error?: string): LoopEvent => ({
    type: 'done',
    reason,
    text: lastText,
    ...(error !== undefined ? { error } : {}),
    turns,
    usage: { ...usage },
    messages: [...messages],
  });
  let modelTools: ReturnType<typeof toModelTools> = [];
  const toolCtx = { ...opts.toolContext, signal: stop.signal };

  let appended: ModelMessage[] = [];
  const append = (m: ModelMessage) => {
    messages.push(m);
    appended.push(m);
  };
  function* surface(injections: Injection[]): Generator<LoopEvent> {
    for (const injection of injections) {
      const message: ModelMessage = { role: 'user', content: injection.text };
      append(message);
      yield { type: 'message_surfaced', injection, message };
    }
  }

  try {
    modelTools = toModelTools(opts.tools);
    for (;;) {
      if (stop.cause) return yield done(stop.cause);
      if (turns >= opts.maxTurns)
        return yield done('max_turns', `stopped after ${turns} turns (max_turns ${opts.maxTurns})`);
      const overBudget = opts.beforeModelCall ? await opts.beforeModelCall() : undefined;
      if (overBudget !== undefined) return yield done('budget', overBudget);

      turns++;
      appended = [];
      yield { type: 'turn_start', turn: turns };
      if (opts.pending) yield* surface(await opts.pending());

      const builder = new ReplyBuilder();
      let reply: ModelReply;
      try {
        reply = yield* streamReply(opts, messages, modelTools, stop.signal, builder);
      } catch (err) {
        if (stop.cause) {
          // Keep what the person already saw, but never a half-made tool call.
          const partial = builder.text();
          if (partial.trim()) {
            append({ role: 'assistant', content: [{ type: 'text', text: partial }] });
            lastText = partial;
          }
          yield { type: 'turn_end', turn: turns, messages: appended };
          return yield done(stop.cause);
        }
        yield { type: 'turn_end', turn: turns, messages: appended };
        return yield done('failed', `model call failed: ${errorMessage(err)}`);
      }

      usage.inputTokens += reply.usage.inputTokens;
      usage.outputTokens += reply.usage.outputTokens;
      yield { type: 'usage', ...reply.usage };
      if (reply.text.trim()) lastText = reply.text;
      if (reply.content.length > 0) append({ role: 'assistant', content: reply.content });

      if (reply.toolCalls.length === 0) {
        // A line typed or a message received during the final answer still deserves a reply.
        const late = opts.pending ? await opts.pending() : [];
        yield* surface(late);
        yield { type: 'turn_end', turn: turns, messages: appended };
        if (late.length === 0) return yield done('completed');
        continue;
      }

      const { results, held } = yield* runToolCalls(reply.toolCalls, opts, toolCtx, stop);
      append(toolResultsMessage(results));
      yield* surface(held);
      yield { type: 'turn_end', turn: turns, messages: appended };
    }
  } catch (err) {
    // A callback (gate, hooks, pending, budget) threw: the run fails, the caller does not crash.
    // An abort that surfaced through a callback (e.g. a pending approval) is still an abort.
    closeDanglingCalls(messages, stop.cause ? `the turn was stopped (${stop.cause})` : errorMessage(err));
    yield stop.cause ? done(stop.cause) : done('failed', errorMessage(err));
  } finally {
    stop.dispose();
  }
}

/** Why a run was stopped from outside: the caller's abort or the wall clock, whichever came first. */
interface RunStop {
  /** Aborts the model call and the tools under way. */
  signal: AbortSignal;
  cause: 'aborted' | 'timeout' | undefined;
  /** Stops the clock and stops listening to the caller's signal. */
  dispose(): void;
}

/**
 * One controller for the whole run: the caller's abort and the wall clock both land here,
 * and `cause` remembers which came first.
 */
function runStop(signal: AbortSignal | undefined, timeoutMs: number): RunStop {
  const ctl = new AbortController();
  const stop: RunStop = {
    signal: ctl.signal,
    cause: undefined,
    dispose: () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
  const onAbort = () => {
    stop.cause ??= 'aborted';
    ctl.abort(signal?.reason instanceof Error ? signal.reason : new Error('aborted by the user'));
  };
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    stop.cause ??= 'timeout';
    ctl.abort(new Error(`timed out after ${Math.round(timeoutMs / 1000)}s`));
  }, timeoutMs);
  // The timer only aborts work that keeps the process alive anyway; it must not do so itself.
  timer.unref();
  return stop;
}

/**
 * The model's reply to the conversation so far, its text streamed as `text_delta` events; throws when the call fails.
 */
async function* streamReply(
  opts: LoopOptions,
  messages: ModelMessage[],
  modelTools: ReturnType<typeof toModelTools>,
  signal: AbortSignal,
  builder: ReplyBuilder,
): AsyncGenerator<LoopEvent, ModelReply> {
  const stream = callModel(
    {
      model: opts.model,
      call: {
        prompt: toModelPrompt(opts.system, messages),
        ...(modelTools.length > 0 ? { tools: modelTools, toolChoice: { type: 'auto' } } : {}),
        ...(opts.maxOutputTokens !== undefined ? { maxOutputTokens: opts.maxOutputTokens } : {}),
        ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
      },
      signal,
      maxRetries: opts.maxRetries ?? 2,
      retryDelayMs: opts.retryDelayMs ?? 2000,
    },
    builder,
  );
  for (;;) {
    const next = await stream.next();
    if (next.done) return next.value;
    yield { type: 'text_delta', text: next.value };
  }
}

interface CallResult {
  id: string;
  name: string;
  result: ToolResult;
}

/**
 * A reply's tool calls, in order, each with its result; once the run is stopped the rest are
 * answered "not run". Injections are held until every call has its result, because a user
 * message between a tool call and its result is invalid for every provider.
 */
async function* runToolCalls(
  calls: ModelReply['toolCalls'],
  opts: LoopOptions,
  toolCtx: ToolContext,
  stop: RunStop,
): AsyncGenerator<LoopEvent, { results: CallResult[]; held: Injection[] }> {
  const results: CallResult[] = [];
  const held: Injection[] = [];
  for (const mc of calls) {
    if (stop.cause) {
      results.push({
        id: mc.id,
        name: mc.name,
        result: { output: `Not run: the turn was stopped (${stop.cause}).`, isError: true },
      });
      continue;
    }
    const call = { id: mc.id, name: mc.name, input: mc.input };
    yield { type: 'tool_call', call };
    const outcome = await runToolCall(mc, opts.tools, opts, toolCtx);
    results.push({ id: mc.id, name: mc.name, result: outcome.result });
    yield { type: 'tool_result', call, result: outcome.result, durationMs: outcome.durationMs };
    if (outcome.executed && opts.afterTool && !stop.cause) await opts.afterTool(call, outcome.result);
    if (opts.pending && !stop.cause) held.push(...(await opts.pending()));
  }
  return { results, held };
}

/** The tool message that answers a reply's tool calls. */
function toolResultsMessage(results: CallResult[]): ModelMessage {
  return {
    role: 'tool',
    content: results.map((r) => ({
      type: 'tool-result' as const,
      toolCallId: r.id,
      toolName: r.name,
      output: { type: r.result.isError ? ('error-text' as const) : ('text' as const), value: r.result.output },
    })),
  };
}

/** Gives every tool call of the last assistant message a result, so the history stays valid. */
function closeDanglingCalls(messages: ModelMessage[], why: string): void {
  const last = messages.at(-1);
  if (last?.role !== 'assistant' || typeof last.content === 'string') return;
  const calls = last.content.filter((p) => p.type === 'tool-call');
  if (calls.length === 0) return;
  messages.push({
    role: 'tool',
    content: calls.map((c) => ({
      type: 'tool-result' as const,
      toolCallId: c.toolCallId,
      toolName: c.toolName,
      output: { type: 'error-text' as const, value: `Not run: ${why}` },
    })),
  });
}
