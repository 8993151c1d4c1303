import type { LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { ServerResponse } from 'node:http';
import type { Adapter, ToolNaming } from './wire.js';

/** The Anthropic Messages API as Claude Code calls it (`ANTHROPIC_BASE_URL`): SSE stream, tool_use blocks. */
export const anthropicWire: Adapter = {
  isModelCall: (m, url) => m === 'POST' && /^\/v1\/messages(\?|$)/.test(url),
  otherReply: (url) => (url.includes('count_tokens') ? '{"input_tokens":100}' : '{}'),
  hasTools: (b) => Array.isArray(b.tools) && b.tools.length > 0,
  toolNames: (b) => ((b.tools ?? []) as { name: string }[]).map((t) => t.name),
  toPrompt: anthropicPrompt,
  stream: anthropicStream,
};

type Block = {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
};

function anthropicPrompt(body: Record<string, unknown>, naming: ToolNaming): LanguageModelV3Prompt {
  const out: LanguageModelV3Prompt = [];
  const names = new Map<string, string>();
  for (const m of (body.messages ?? []) as { role: string; content: string | Block[] }[]) {
    const blocks: Block[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (m.role === 'assistant') {
      const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = [];
      for (const b of blocks) {
        if (b.type === 'text' && b.text) content.push({ type: 'text', text: b.text });
        if (b.type === 'tool_use' && b.id && b.name) {
          const name = naming.fromVendor(b.name);
          names.set(b.id, name);
          content.push({ type: 'tool-call', toolCallId: b.id, toolName: name, input: b.input ?? {} });
        }
      }
      out.push({ role: 'assistant', content });
      continue;
    }
    const results = blocks.filter((b) => b.type === 'tool_result');
    if (results.length) {
      out.push({
        role: 'tool',
        content: results.map((b) => {
          const value =
            typeof b.content === 'string'
              ? b.content
              : Array.isArray(b.content)
                ? (b.content as Block[]).map((c) => c.text ?? '').join('')
                : '';
          return {
            type: 'tool-result' as const,
            toolCallId: b.tool_use_id ?? '',
            toolName: names.get(b.tool_use_id ?? '') ?? 'unknown',
            output: b.is_error ? { type: 'error-text' as const, value } : { type: 'text' as const, value },
          };
        }),
      });
    }
    const texts = blocks
      .filter((b) => b.type === 'text' && b.text)
      .map((b) => ({ type: 'text' as const, text: b.text! }));
    if (texts.length) out.push({ role: 'user', content: texts });
  }
  return out;
}

async function anthropicStream(
  res: ServerResponse,
  parts: LanguageModelV3StreamPart[],
  naming: ToolNaming,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const ev = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  let input = 0;
  let output = 0;
  let stop = 'end_turn';
  for (const p of parts)
    if (p.type === 'finish') {
      input = p.usage.inputTokens.total ?? 0;
      output = p.usage.outputTokens.total ?? 0;
      if (p.finishReason.unified === 'tool-calls') stop = 'tool_use';
    }
  ev('message_start', {
    message: {
      id: `msg_${Date.now()}${Math.random().toString(36).slice(2, 8)}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: input, output_tokens: 1 },
    },
  });
  let index = 0;
  let textOpen = false;
  for (const p of parts) {
    if (p.type === 'text-delta') {
      if (!textOpen) {
        ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
        textOpen = true;
      }
      ev('content_block_delta', { index, delta: { type: 'text_delta', text: p.delta } });
    } else if (p.type === 'text-end' && textOpen) {
      ev('content_block_stop', { index });
      index++;
      textOpen = false;
    } else if (p.type === 'tool-call') {
      ev('content_block_start', {
        index,
        content_block: {
          type: 'tool_use',
          id: `toolu_${p.toolCallId}_${Date.now()}`,
          name: naming.toVendor(p.toolName),
          input: {},
        },
      });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p.input } });
      ev('content_block_stop', { index });
      index++;
    }
  }
  if (textOpen) ev('content_block_stop', { index });
  ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: output } });
  ev('message_stop', {});
  res.end();
}
