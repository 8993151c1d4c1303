import type { LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { ServerResponse } from 'node:http';
import { finishOf, replyOf, type Adapter, type ToolNaming } from './wire.js';

/**
 * The Gemini API as Gemini CLI calls it (`GOOGLE_GEMINI_BASE_URL`): `contents` in,
 * `:streamGenerateContent?alt=sse` chunks (or one `:generateContent` JSON) out. Requests
 * without tools (its model router, its checks) get a short text and do not move the script.
 */
export const geminiWire: Adapter = {
  isModelCall: (m, url) => m === 'POST' && /:(stream)?[gG]enerateContent(\?|$)/.test(url),
  otherReply: (url) => (url.includes('countTokens') ? '{"totalTokens":100}' : '{}'),
  hasTools: (b) => toolNames(b).length > 0,
  toolNames,
  toPrompt,
  stream,
};

interface Part {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response?: Record<string, unknown> };
}

function toolNames(b: Record<string, unknown>): string[] {
  return ((b.tools ?? []) as { functionDeclarations?: { name: string }[] }[]).flatMap((t) =>
    (t.functionDeclarations ?? []).map((f) => f.name),
  );
}

/**
 * Gemini CLI hands a turn-start hook's text to the model inside `<hook_context>`, with `<`
 * and `>` escaped; decoded here so the scripted model sees the framing a real model reads.
 */
function hookContext(text: string): string {
  return text.replace(/<hook_context>([\s\S]*?)<\/hook_context>/g, (_, inner: string) =>
    inner.replace(/&lt;/g, '<').replace(/&gt;/g, '>'),
  );
}

function toPrompt(body: Record<string, unknown>, naming: ToolNaming): LanguageModelV3Prompt {
  const out: LanguageModelV3Prompt = [];
  const ids = new Map<string, string>();
  let n = 0;
  for (const c of (body.contents ?? []) as { role: string; parts?: Part[] }[]) {
    const parts = c.parts ?? [];
    if (c.role === 'model') {
      const content: Extract<LanguageModelV3Message, { role: 'assistant' }>['content'] = [];
      for (const p of parts) {
        if (p.text && !p.thought) content.push({ type: 'text', text: p.text });
        if (p.functionCall) {
          const id = p.functionCall.id ?? `call-${n++}`;
          ids.set(p.functionCall.id ?? p.functionCall.name, id);
          content.push({
            type: 'tool-call',
            toolCallId: id,
            toolName: naming.fromVendor(p.functionCall.name),
            input: p.functionCall.args ?? {},
          });
        }
      }
      out.push({ role: 'assistant', content });
      continue;
    }
    const results = parts.filter((p) => p.functionResponse);
    if (results.length) {
      out.push({
        role: 'tool',
        content: results.map(({ functionResponse: r }) => {
          const res = r!.response ?? {};
          const error = typeof res.error === 'string' ? res.error : undefined;
          const value = error ?? (typeof res.output === 'string' ? res.output : JSON.stringify(res));
          return {
            type: 'tool-result' as const,
            toolCallId: ids.get(r!.id ?? r!.name) ?? '',
            toolName: naming.fromVendor(r!.name),
            output: error !== undefined ? { type: 'error-text' as const, value } : { type: 'text' as const, value },
          };
        }),
      });
    }
    const texts = parts
      .filter((p) => p.text !== undefined && !p.functionResponse)
      .map((p) => ({ type: 'text' as const, text: hookContext(p.text!) }));
    if (texts.length) out.push({ role: 'user', content: texts });
  }
  return out;
}

async function stream(
  res: ServerResponse,
  parts: LanguageModelV3StreamPart[],
  naming: ToolNaming,
  url: string,
): Promise<void> {
  const usage = finishOf(parts);
  const { text, calls } = replyOf(parts);
  const out: Part[] = [];
  if (text) out.push({ text });
  for (const c of calls)
    out.push({
      functionCall: {
        id: `${c.id}-${Date.now()}`,
        name: naming.toVendor(c.name),
        args: c.name === 'shell' ? { command: c.input.command } : c.input,
      },
    });
  const chunk = {
    candidates: [{ content: { role: 'model', parts: out }, finishReason: 'STOP', index: 0 }],
    usageMetadata: {
      promptTokenCount: usage.input,
      candidatesTokenCount: Math.max(1, usage.output),
      totalTokenCount: usage.input + Math.max(1, usage.output),
    },
    modelVersion: 'fake-gemini',
  };
  if (!url.includes('streamGenerateContent')) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(chunk));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  res.end();
}
