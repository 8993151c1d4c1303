import type { LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { ServerResponse } from 'node:http';
import type { Runtime } from '../../src/runtimes/types.js';

/** How one vendor API is spoken by the fake server: which requests are model calls, prompts in, streams out. */
export interface Adapter {
  isModelCall(method: string, url: string): boolean;
  otherReply(url: string): string;
  hasTools(body: Record<string, unknown>): boolean;
  toolNames(body: Record<string, unknown>): string[];
  toPrompt(body: Record<string, unknown>, naming: ToolNaming): LanguageModelV3Prompt;
  /** Streams a reply; `body` is the request it answers (which tools it offered, and in what form). */
  stream(
    res: ServerResponse,
    parts: LanguageModelV3StreamPart[],
    naming: ToolNaming,
    url: string,
    body: Record<string, unknown>,
  ): Promise<void>;
}

export interface ToolNaming {
  toVendor(canonical: string): string;
  fromVendor(name: string): string;
}

export function namingFor(runtime: Pick<Runtime, 'toolNames' | 'mcpToolPrefix'>): ToolNaming {
  const byVendor = new Map(Object.entries(runtime.toolNames).map(([c, v]) => [v, c]));
  return {
    toVendor: (c) => runtime.toolNames[c] ?? runtime.mcpToolPrefix + c,
    fromVendor: (v) =>
      byVendor.get(v) ?? (v.startsWith(runtime.mcpToolPrefix) ? v.slice(runtime.mcpToolPrefix.length) : v),
  };
}

/** Usage and finish reason of a scripted reply. */
export function finishOf(parts: LanguageModelV3StreamPart[]): { input: number; output: number; toolCalls: boolean } {
  for (const p of parts)
    if (p.type === 'finish')
      return {
        input: p.usage.inputTokens.total ?? 0,
        output: p.usage.outputTokens.total ?? 0,
        toolCalls: p.finishReason.unified === 'tool-calls',
      };
  return { input: 0, output: 0, toolCalls: false };
}

/** A scripted reply's text and tool calls, in order. */
export function replyOf(parts: LanguageModelV3StreamPart[]): {
  text: string;
  calls: { id: string; name: string; input: Record<string, unknown> }[];
} {
  let text = '';
  const calls: { id: string; name: string; input: Record<string, unknown> }[] = [];
  for (const p of parts) {
    if (p.type === 'text-delta') text += p.delta;
    else if (p.type === 'tool-call')
      calls.push({ id: p.toolCallId, name: p.toolName, input: JSON.parse(p.input || '{}') as Record<string, unknown> });
  }
  return { text, calls };
}
