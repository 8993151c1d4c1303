import type { LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadScriptedModel } from '../../src/model/scripted/index.js';
import type { Runtime } from '../../src/runtimes/types.js';

/**
 * A local stand-in for a vendor's model API (127.0.0.1 only) that replays a scripted-model
 * YAML file, so one script language drives every runtime: each request is turned into the
 * AI SDK prompt the scripted model reads, its reply is streamed back in the vendor's wire
 * format, and tool names are mapped between Flotilla's canonical ids and the CLI's own.
 * Requests without tools (titles, quota checks) get a short text and do not move the script.
 */
export type Wire = 'anthropic' | 'responses' | 'gemini';

export interface FakeVendor {
  url: string;
  /** Every scripted request, as the prompt the scripted model saw. */
  prompts: LanguageModelV3Prompt[];
  /** Tool names the CLI offered in each scripted request (vendor spelling). */
  tools: string[][];
  /** The text of every user turn and tool result the model was shown, across all requests. */
  seen(): string;
  close(): Promise<void>;
}

export interface ToolNaming {
  toVendor(canonical: string): string;
  fromVendor(name: string): string;
}

export function namingFor(runtime: Pick<Runtime, 'toolNames' | 'mcpToolPrefix'>): ToolNaming {
  const byVendor = new Map(Object.entries(runtime.toolNames).map(([c, v]) => [v, c]));
  return {
    toVendor: (c) => runtime.toolNames[c] ?? runtime.mcpToolPrefix + c,
    fromVendor: (v) => byVendor.get(v) ?? (v.startsWith(runtime.mcpToolPrefix) ? v.slice(runtime.mcpToolPrefix.length) : v),
  };
}

export async function startFakeVendor(wire: Wire, scriptFile: string, naming: ToolNaming, env: Record<string, string | undefined> = process.env): Promise<FakeVendor> {
  const model = loadScriptedModel(scriptFile, { env });
  const prompts: LanguageModelV3Prompt[] = [];
  const tools: string[][] = [];
  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'fake_error', message: String(err) } }));
    });
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    const adapter = ADAPTERS[wire];
    if (!adapter.isModelCall(req.method ?? 'GET', req.url ?? '/')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(adapter.otherReply(req.url ?? '/'));
      return;
    }
    if (!adapter.hasTools(body)) {
      await adapter.stream(res, textParts('ok'), naming);
      return;
    }
    const prompt = adapter.toPrompt(body, naming);
    prompts.push(prompt);
    tools.push(adapter.toolNames(body));
    const result = await model.doStream({ prompt, tools: [] } as never);
    const parts: LanguageModelV3StreamPart[] = [];
    const reader = result.stream.getReader();
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      parts.push(next.value);
    }
    await adapter.stream(res, parts, naming);
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    prompts,
    tools,
    seen: () => prompts.flatMap((p) => p.flatMap(messageTexts)).join('\n'),
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

function messageTexts(m: LanguageModelV3Message): string[] {
  if (m.role === 'system') return [];
  if (m.role === 'user') return m.content.map((p) => (p.type === 'text' ? p.text : ''));
  if (m.role === 'tool') return m.content.map((p) => (p.type === 'tool-result' ? JSON.stringify(p.output) : ''));
  return [];
}

function textParts(text: string): LanguageModelV3StreamPart[] {
  return [
    { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: text }, { type: 'text-end', id: 't' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } } },
  ];
}

interface Adapter {
  isModelCall(method: string, url: string): boolean;
  otherReply(url: string): string;
  hasTools(body: Record<string, unknown>): boolean;
  toolNames(body: Record<string, unknown>): string[];
  toPrompt(body: Record<string, unknown>, naming: ToolNaming): LanguageModelV3Prompt;
  stream(res: ServerResponse, parts: LanguageModelV3StreamPart[], naming: ToolNaming): Promise<void>;
}

const ADAPTERS: Record<Wire, Adapter> = {
  anthropic: {
    isModelCall: (m, url) => m === 'POST' && /^\/v1\/messages(\?|$)/.test(url),
    otherReply: (url) => (url.includes('count_tokens') ? '{"input_tokens":100}' : '{}'),
    hasTools: (b) => Array.isArray(b.tools) && b.tools.length > 0,
    toolNames: (b) => ((b.tools ?? []) as { name: string }[]).map((t) => t.name),
    toPrompt: anthropicPrompt,
    stream: anthropicStream,
  },
  responses: undefined as unknown as Adapter,
  gemini: undefined as unknown as Adapter,
};

type Block = { type: string; text?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown; is_error?: boolean };

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
          const value = typeof b.content === 'string' ? b.content : Array.isArray(b.content) ? (b.content as Block[]).map((c) => c.text ?? '').join('') : '';
          return { type: 'tool-result' as const, toolCallId: b.tool_use_id ?? '', toolName: names.get(b.tool_use_id ?? '') ?? 'unknown', output: b.is_error ? { type: 'error-text' as const, value } : { type: 'text' as const, value } };
        }),
      });
    }
    const texts = blocks.filter((b) => b.type === 'text' && b.text).map((b) => ({ type: 'text' as const, text: b.text! }));
    if (texts.length) out.push({ role: 'user', content: texts });
  }
  return out;
}

async function anthropicStream(res: ServerResponse, parts: LanguageModelV3StreamPart[], naming: ToolNaming): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const ev = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  let input = 0;
  let output = 0;
  let stop = 'end_turn';
  for (const p of parts) if (p.type === 'finish') { input = p.usage.inputTokens.total ?? 0; output = p.usage.outputTokens.total ?? 0; if (p.finishReason.unified === 'tool-calls') stop = 'tool_use'; }
  ev('message_start', { message: { id: `msg_${Date.now()}${Math.random().toString(36).slice(2, 8)}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: input, output_tokens: 1 } } });
  let index = 0;
  let textOpen = false;
  for (const p of parts) {
    if (p.type === 'text-delta') {
      if (!textOpen) { ev('content_block_start', { index, content_block: { type: 'text', text: '' } }); textOpen = true; }
      ev('content_block_delta', { index, delta: { type: 'text_delta', text: p.delta } });
    } else if (p.type === 'text-end' && textOpen) {
      ev('content_block_stop', { index });
      index++;
      textOpen = false;
    } else if (p.type === 'tool-call') {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_${p.toolCallId}_${Date.now()}`, name: naming.toVendor(p.toolName), input: {} } });
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
