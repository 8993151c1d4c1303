import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { chooseReply, type PromptView } from './position.js';
import { loadScript, parseScript, type Script, type ScriptInput } from './script.js';
import { renderDeep, renderString, type TemplateVars } from './template.js';

/**
 * `script:<file.yaml>`: a deterministic language model (§6) that plays replies from a script.
 * It implements the AI SDK's LanguageModelV3, so the production loop runs unchanged on it.
 * Its position comes from the prompt (see position.ts), never from call counters.
 */

/** What a scripted model was asked, for tests and debugging. */
export interface ScriptedCall {
  prompt: LanguageModelV3Prompt;
  /** Names of the tools the model was shown. */
  tools: string[];
  /** 1-based reply number in the conversation. */
  turn: number;
  /** Index of the reply played, or undefined when the script was exhausted. */
  reply: number | undefined;
}

export interface ScriptedModelOptions {
  /** Called at the start of every doGenerate / doStream. */
  onCall?: (call: ScriptedCall) => void;
  /** Values for `{{env.NAME}}` (default: process.env). */
  env?: Record<string, string | undefined>;
  /** Shown as the model id (the script's path). */
  modelId?: string;
}

/** A scripted `error:` reply, shaped like the AI SDK's APICallError so callers treat both alike. */
export class ScriptedModelError extends Error {
  readonly statusCode: number;
  readonly isRetryable: boolean;
  readonly responseHeaders: Record<string, string> = {};
  constructor(statusCode: number, message: string) {
    super(message);
    this.name = 'AI_APICallError';
    this.statusCode = statusCode;
    this.isRetryable = statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500;
  }
}

interface Planned {
  text: string;
  toolCalls: { id: string; name: string; input: string }[];
  usage: LanguageModelV3Usage;
  finishReason: LanguageModelV3FinishReason;
  chunkChars: number;
  delayMs: number;
  latencyMs: number;
}

export class ScriptedModel implements LanguageModelV3 {
  readonly specificationVersion = 'v3';
  readonly provider = 'script';
  readonly modelId: string;
  readonly supportedUrls: Record<string, RegExp[]> = {};
  private readonly script: Script;
  private readonly opts: ScriptedModelOptions;
  /** Failures already served per `error.times` reply: the one deliberate piece of state. */
  private readonly failures = new Map<string, number>();

  constructor(script: Script | ScriptInput, opts: ScriptedModelOptions = {}) {
    // Parsing is idempotent, so a parsed script and raw data take the same path.
    this.script = parseScript(script);
    this.opts = opts;
    this.modelId = opts.modelId ?? this.script.name ?? 'inline';
  }

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const plan = this.plan(options);
    await wait(plan.latencyMs, options.abortSignal);
    const content: LanguageModelV3Content[] = [];
    if (plan.text) content.push({ type: 'text', text: plan.text });
    for (const c of plan.toolCalls)
      content.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.input });
    return { content, finishReason: plan.finishReason, usage: plan.usage, warnings: [] };
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const plan = this.plan(options);
    await wait(plan.latencyMs, options.abortSignal);
    const parts = streamParts(plan, options.abortSignal);
    return {
      stream: new ReadableStream<LanguageModelV3StreamPart>({
        async pull(controller) {
          try {
            const next = await parts.next();
            if (next.done) controller.close();
            else controller.enqueue(next.value);
          } catch (err) {
            controller.error(err);
          }
        },
        async cancel() {
          await parts.return(undefined);
        },
      }),
    };
  }

  /** Chooses and renders the reply for this prompt; throws a scripted provider error. */
  private plan(options: LanguageModelV3CallOptions): Planned {
    const { index, view } = chooseReply(this.script, options.prompt);
    this.opts.onCall?.({
      prompt: options.prompt,
      tools: (options.tools ?? []).map((t) => t.name),
      turn: view.turn,
      reply: index,
    });
    const reply = index === undefined ? undefined : this.script.replies[index];
    if (reply?.error) {
      const key = `${view.turn}:${index}`;
      const served = this.failures.get(key) ?? 0;
      if (reply.error.times === undefined || served < reply.error.times) {
        this.failures.set(key, served + 1);
        throw new ScriptedModelError(reply.error.status, reply.error.message);
      }
    }
    const vars = templateVars(view, this.opts.env ?? process.env);
    const text = renderString(reply ? (reply.text ?? '') : this.script.exhausted, vars);
    const toolCalls = (reply?.tool_calls ?? []).map((c, j) => ({
      id: c.id ?? `call_${view.turn}_${j + 1}`,
      name: c.tool,
      input: JSON.stringify(renderDeep(c.input, vars)),
    }));
    const pace = {
      ...this.script.defaults,
      ...stripUndefined({ chunk_chars: reply?.chunk_chars, delay_ms: reply?.delay_ms, latency_ms: reply?.latency_ms }),
    };
    const promptChars = JSON.stringify(options.prompt).length;
    const outputChars = text.length + toolCalls.reduce((n, c) => n + c.name.length + c.input.length, 0);
    const inputTokens = reply?.usage?.input_tokens ?? Math.ceil(promptChars / 4);
    const outputTokens = reply?.usage?.output_tokens ?? Math.max(1, Math.ceil(outputChars / 4));
    return {
      text,
      toolCalls,
      usage: {
        inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
      },
      finishReason:
        toolCalls.length > 0 ? { unified: 'tool-calls', raw: 'tool_calls' } : { unified: 'stop', raw: 'stop' },
      chunkChars: pace.chunk_chars ?? 24,
      delayMs: pace.delay_ms ?? 0,
      latencyMs: pace.latency_ms ?? 0,
    };
  }
}

/** Reads a script file into a model. */
export function loadScriptedModel(file: string, opts: ScriptedModelOptions = {}): ScriptedModel {
  return new ScriptedModel(loadScript(file), { modelId: file, ...opts });
}

async function* streamParts(plan: Planned, signal: AbortSignal | undefined): AsyncGenerator<LanguageModelV3StreamPart> {
  yield { type: 'stream-start', warnings: [] };
  if (plan.text) {
    yield { type: 'text-start', id: 'text-1' };
    const size = plan.chunkChars > 0 ? plan.chunkChars : plan.text.length;
    for (let i = 0; i < plan.text.length; i += size) {
      await wait(plan.delayMs, signal);
      yield { type: 'text-delta', id: 'text-1', delta: plan.text.slice(i, i + size) };
    }
    yield { type: 'text-end', id: 'text-1' };
  }
  for (const c of plan.toolCalls) {
    await wait(plan.delayMs, signal);
    yield { type: 'tool-input-start', id: c.id, toolName: c.name };
    yield { type: 'tool-input-delta', id: c.id, delta: c.input };
    yield { type: 'tool-input-end', id: c.id };
    yield { type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.input };
  }
  yield { type: 'finish', usage: plan.usage, finishReason: plan.finishReason };
}

function templateVars(view: PromptView, env: Record<string, string | undefined>): TemplateVars {
  return {
    last_tool_result: view.lastToolResult,
    last_user: view.lastUser,
    last_message: view.lastMessage,
    task: view.task,
    turn: String(view.turn),
    env,
  };
}

/** Sleeps, ending early with an AbortError like a real provider's fetch. */
function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted.', 'AbortError');
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
