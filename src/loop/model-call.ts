import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3StreamPart,
  SharedV3ProviderMetadata,
} from '@ai-sdk/provider';
import type { AssistantContent } from 'ai';
import { abortable, throwIfAborted } from '../abort.js';
import { sleep } from '../sleep.js';
import type { Usage } from './types.js';

/**
 * One model call, streamed: text deltas are yielded as they arrive and the generator
 * returns the whole reply. Retryable failures (HTTP 408/409/429/5xx, network; the providers
 * mark them `isRetryable`) are retried with backoff, but only while nothing has been yielded,
 * so a person never sees a reply twice.
 */

export interface ModelToolCall {
  id: string;
  name: string;
  /** The parsed input, or the raw text when it was not valid JSON. */
  input: unknown;
  /** Set when the model's input text was not valid JSON. */
  parseError?: string;
}

export interface ModelReply {
  /** The assistant message parts in stream order, ready to append to the conversation. */
  content: Exclude<AssistantContent, string>;
  text: string;
  toolCalls: ModelToolCall[];
  usage: Usage;
}

export interface CallModelOptions {
  model: LanguageModelV3;
  call: Omit<LanguageModelV3CallOptions, 'abortSignal'>;
  signal: AbortSignal;
  maxRetries: number;
  retryDelayMs: number;
}

type Part = Exclude<AssistantContent, string>[number];

/** The partial reply so far, kept so an abort can still record what the person saw. */
export class ReplyBuilder {
  readonly content: Part[] = [];
  readonly toolCalls: ModelToolCall[] = [];
  usage: Usage = { inputTokens: 0, outputTokens: 0 };
  private openId: string | undefined;

  /** Forgets a failed attempt before a retry. */
  reset(): void {
    this.content.length = 0;
    this.toolCalls.length = 0;
    this.openId = undefined;
  }

  text(): string {
    return this.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
  }

  /** Appends a text or reasoning delta, merging with the open part of the same stream id. */
  delta(kind: 'text' | 'reasoning', id: string, delta: string): void {
    const last = this.content.at(-1);
    if (last && last.type === kind && this.openId === `${kind}:${id}`) {
      last.text += delta;
      return;
    }
    this.openId = `${kind}:${id}`;
    this.content.push({ type: kind, text: delta });
  }

  /** Provider metadata at the end of a reasoning block (e.g. Anthropic's signature) must be sent back. */
  meta(kind: 'text' | 'reasoning', id: string, metadata: SharedV3ProviderMetadata | undefined): void {
    const last = this.content.at(-1);
    if (metadata && last && last.type === kind && this.openId === `${kind}:${id}`) last.providerOptions = metadata;
  }

  toolCall(id: string, name: string, inputText: string, metadata: SharedV3ProviderMetadata | undefined): void {
    this.openId = undefined;
    const call: ModelToolCall = { id, name, input: {} };
    try {
      call.input = inputText.trim() === '' ? {} : (JSON.parse(inputText) as unknown);
    } catch (err) {
      call.input = inputText;
      call.parseError = err instanceof Error ? err.message : String(err);
    }
    this.toolCalls.push(call);
    // Providers require an object as a tool call's input in the history, even for a broken call.
    const input = call.parseError ? {} : call.input;
    this.content.push({
      type: 'tool-call',
      toolCallId: id,
      toolName: name,
      input,
      ...(metadata ? { providerOptions: metadata } : {}),
    });
  }

  reply(): ModelReply {
    return {
      content: this.content.filter((p) => p.type !== 'text' || p.text.length > 0),
      text: this.text(),
      toolCalls: this.toolCalls,
      usage: this.usage,
    };
  }
}

export async function* callModel(opts: CallModelOptions, builder: ReplyBuilder): AsyncGenerator<string, ModelReply> {
  for (let attempt = 0; ; attempt++) {
    let emitted = false;
    try {
      const result = await abortable(opts.model.doStream({ ...opts.call, abortSignal: opts.signal }), opts.signal);
      const reader = result.stream.getReader();
      try {
        for (;;) {
          const { done, value } = await abortable(reader.read(), opts.signal);
          if (done) break;
          const text = handlePart(value, builder);
          if (text) {
            emitted = true;
            yield text;
          }
        }
      } finally {
        // Stops the provider's HTTP stream when we leave early (abort, error part).
        reader.cancel().catch(() => undefined);
      }
      return builder.reply();
    } catch (err) {
      if (opts.signal.aborted || emitted || attempt >= opts.maxRetries || !isRetryable(err)) throw err;
      builder.reset();
      await sleep(retryDelay(err, attempt, opts.retryDelayMs), opts.signal);
      throwIfAborted(opts.signal);
    }
  }
}

/** Applies one stream part; returns the text to show, if any. Throws on an error part. */
function handlePart(part: LanguageModelV3StreamPart, b: ReplyBuilder): string | undefined {
  switch (part.type) {
    case 'text-delta':
      b.delta('text', part.id, part.delta);
      return part.delta;
    case 'text-end':
      b.meta('text', part.id, part.providerMetadata);
      return undefined;
    case 'reasoning-delta':
      b.delta('reasoning', part.id, part.delta);
      return undefined;
    case 'reasoning-end':
      b.meta('reasoning', part.id, part.providerMetadata);
      return undefined;
    case 'tool-call':
      if (!part.providerExecuted) b.toolCall(part.toolCallId, part.toolName, part.input, part.providerMetadata);
      return undefined;
    case 'finish':
      b.usage = { inputTokens: part.usage.inputTokens.total ?? 0, outputTokens: part.usage.outputTokens.total ?? 0 };
      return undefined;
    case 'error':
      throw toError(part.error);
    default:
      return undefined;
  }
}

function isRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { isRetryable?: unknown }).isRetryable === true;
}

/** Exponential backoff; a provider's `retry-after(-ms)` header wins when it is sane (< 60 s). */
function retryDelay(err: unknown, attempt: number, base: number): number {
  const backoff = base * 2 ** attempt;
  const headers = (err as { responseHeaders?: Record<string, string> }).responseHeaders;
  const ms = Number(headers?.['retry-after-ms']);
  if (Number.isFinite(ms) && ms >= 0 && ms < 60_000) return ms;
  const secs = Number(headers?.['retry-after']);
  if (Number.isFinite(secs) && secs >= 0 && secs < 60) return secs * 1000;
  return backoff;
}

/** Error parts carry whatever the provider sent (often a plain object): make it an Error with a useful message. */
export function toError(e: unknown): Error {
  if (e instanceof Error) return e;
  if (typeof e === 'object' && e !== null) {
    const o = e as { message?: unknown; type?: unknown; error?: unknown };
    if (typeof o.message === 'string')
      return new Error(typeof o.type === 'string' ? `${o.type}: ${o.message}` : o.message);
    if (o.error !== undefined) return toError(o.error);
    return new Error(JSON.stringify(e));
  }
  return new Error(String(e));
}
