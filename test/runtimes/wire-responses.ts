import type { LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { ServerResponse } from 'node:http';
import { finishOf, replyOf, type Adapter, type ToolNaming } from './wire.js';

/**
 * The OpenAI Responses API as Codex calls it (a `[model_providers.x]` with `wire_api =
 * "responses"`): `input` items in, SSE `response.*` events out. Codex offers MCP tools in a
 * namespace (`mcp__flotilla` holding `send_message` …) and its shell as `exec_command`
 * (`{cmd}`), so names and the shell's input are mapped here. Its tools come in three forms,
 * and a call is answered in the form the request offered, as a real model would answer:
 * a JSON `function` (`function_call`), a freeform `custom` tool taking raw text
 * (`custom_tool_call`: apply_patch for the models of Codex's own catalogue), or — for the
 * catalogue's current models ("code mode") — only a JavaScript `exec` tool, listed in an
 * `additional_tools` input item, whose program calls the nested tool (`tools.apply_patch(…)`).
 */
export const responsesWire: Adapter = {
  isModelCall: (m, url) => m === 'POST' && /\/responses(\?|$)/.test(url),
  otherReply: (url) => (url.includes('/models') ? '{"object":"list","data":[],"models":[]}' : '{}'),
  hasTools: (b) => offered(b).length > 0 && !isTitleRequest(b),
  toolNames,
  toPrompt,
  stream,
};

interface Item {
  type: string;
  tools?: Tool[];
  input?: string;
  role?: string;
  content?: { type: string; text?: string }[] | string;
  name?: string;
  namespace?: string;
  arguments?: string;
  call_id?: string;
  output?: string | { type: string; text?: string }[];
}

/**
 * Codex names each thread it starts with a side request that carries the same tools (code mode's); it is not the
 * agent's turn.
 */
function isTitleRequest(b: Record<string, unknown>): boolean {
  const meta = (b.client_metadata ?? {}) as Record<string, unknown>;
  return String(meta['x-codex-turn-metadata'] ?? '').includes('"thread_source":"thread_title"');
}

interface Tool {
  type: string;
  name?: string;
  tools?: Tool[];
}

/**
 * Every tool a request offers, top-level and in `additional_tools` items, namespaces opened (`functions` is the default
 * one).
 */
function offered(b: Record<string, unknown>): { name: string; type: string }[] {
  const out: { name: string; type: string }[] = [];
  const add = (ts: Tool[]) => {
    for (const t of ts) {
      if (t.type === 'namespace')
        for (const inner of t.tools ?? [])
          out.push({
            name: t.name === 'functions' ? (inner.name ?? '') : `${t.name ?? ''}__${inner.name ?? ''}`,
            type: inner.type,
          });
      else if (t.name) out.push({ name: t.name, type: t.type });
    }
  };
  add((b.tools ?? []) as Tool[]);
  for (const item of (b.input ?? []) as Item[]) if (item.type === 'additional_tools') add(item.tools ?? []);
  return out;
}

function toolNames(b: Record<string, unknown>): string[] {
  return offered(b).map((t) => t.name);
}

const texts = (c: Item['content'] | Item['output']): string =>
  typeof c === 'string' ? c : (c ?? []).map((p) => p.text ?? '').join('');

function toPrompt(body: Record<string, unknown>, naming: ToolNaming): LanguageModelV3Prompt {
  const out: LanguageModelV3Prompt = [];
  const names = new Map<string, string>();
  let assistant: Extract<LanguageModelV3Message, { role: 'assistant' }> | undefined;
  let answered = false;
  let asked = false;
  for (const item of (body.input ?? []) as Item[]) {
    const isAssistant =
      (item.type === 'message' && item.role === 'assistant') ||
      item.type === 'function_call' ||
      item.type === 'custom_tool_call';
    if (!isAssistant) assistant = undefined;
    if (item.type === 'message' && item.role === 'assistant') {
      // One model reply is its text and its calls: consecutive assistant items are one message.
      if (!assistant) {
        assistant = { role: 'assistant', content: [] };
        out.push(assistant);
      }
      assistant.content.push({ type: 'text', text: texts(item.content) });
      answered = true;
    } else if (item.type === 'function_call') {
      if (!assistant) {
        assistant = { role: 'assistant', content: [] };
        out.push(assistant);
      }
      const name = naming.fromVendor(item.namespace ? `${item.namespace}__${item.name ?? ''}` : (item.name ?? ''));
      names.set(item.call_id ?? '', name);
      let input: unknown = {};
      try {
        input = JSON.parse(item.arguments ?? '{}');
      } catch {
        /* keep {} */
      }
      assistant.content.push({ type: 'tool-call', toolCallId: item.call_id ?? '', toolName: name, input });
      answered = true;
    } else if (item.type === 'custom_tool_call') {
      // Raw text in (a patch, or code mode's JavaScript): the scripted model sees it as {input}.
      if (!assistant) {
        assistant = { role: 'assistant', content: [] };
        out.push(assistant);
      }
      const name = naming.fromVendor(item.name ?? '');
      names.set(item.call_id ?? '', name);
      assistant.content.push({
        type: 'tool-call',
        toolCallId: item.call_id ?? '',
        toolName: name,
        input: { input: item.input ?? '' },
      });
      answered = true;
    } else if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      const value = texts(item.output);
      out.push({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: item.call_id ?? '',
            toolName: names.get(item.call_id ?? '') ?? 'unknown',
            output: isRefusal(value) ? { type: 'error-text', value } : { type: 'text', value },
          },
        ],
      });
    } else if (item.type === 'message') {
      // Codex's instructions are developer messages before the first user message; one after it
      // is what a hook added (a fresh session's first turn woken by mail brings the mail so).
      if (item.role === 'user') asked = true;
      else if (!answered && !asked) continue;
      out.push({ role: 'user', content: [{ type: 'text', text: hookPrompt(texts(item.content)) }] });
    }
  }
  return out;
}

/**
 * Codex hands a hook's text to the model inside `<hook_prompt …>`, XML-escaped; the model
 * reads `&lt;inbox-message …&gt;`. Decoded here so the scripted model sees the framing as
 * a real model would understand it (docs/runtimes.md records the escaping).
 */
function hookPrompt(text: string): string {
  return text.replace(/<hook_prompt[^>]*>([\s\S]*?)<\/hook_prompt>/g, (_, inner: string) =>
    inner
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;|&apos;/g, "'")
      .replace(/&amp;/g, '&'),
  );
}

/** Codex's answer to a call it would not run (a tool it does not offer, a command it refused). */
function isRefusal(output: string): boolean {
  return /^(unsupported call|unknown tool|tool .* not found|.*\brejected\b|.*\bdenied\b|.*\bnot allowed\b)/i.test(
    output.trim(),
  );
}

/**
 * Flotilla's canonical shell input ({command, timeout}) as exec_command's ({cmd, yield_time_ms});
 * a script's `sandbox_permissions` / `justification` pass through (how a Codex model asks to
 * run a command outside its sandbox, which Codex then asks a person about).
 */
function vendorInput(vendorName: string, input: Record<string, unknown>): Record<string, unknown> {
  if (vendorName !== 'exec_command') return input;
  const escalation =
    typeof input.sandbox_permissions === 'string'
      ? { sandbox_permissions: input.sandbox_permissions, justification: input.justification ?? 'the task needs it' }
      : {};
  return {
    cmd: input.command,
    yield_time_ms: typeof input.timeout === 'number' ? input.timeout : 300_000,
    ...escalation,
  };
}

/**
 * One scripted call as the output item a real model would send for the tool as offered: a
 * freeform tool gets its text (a script's `{input}`, Codex's JSON apply_patch shape), a tool
 * only reachable through code mode gets an `exec` program that calls it and shows its result,
 * anything else (offered as a function, or not offered at all) a `function_call`.
 */
function callItem(
  vendor: string,
  input: Record<string, unknown>,
  tools: { name: string; type: string }[],
): Record<string, unknown> {
  const offer = tools.find((t) => t.name === vendor);
  const raw = typeof input.input === 'string' ? input.input : JSON.stringify(input);
  if (offer?.type === 'custom') return { type: 'custom_tool_call', name: vendor, input: raw };
  if (!offer && tools.some((t) => t.name === 'exec' && t.type === 'custom')) {
    const arg = vendor === 'apply_patch' ? raw : vendorInput(vendor, input);
    const program = `const r = await tools.${vendor}(${JSON.stringify(arg)});\ntext(typeof r === 'string' ? r : JSON.stringify(r));\n`;
    return { type: 'custom_tool_call', name: 'exec', input: program };
  }
  const ns = vendor.lastIndexOf('__');
  const where =
    vendor.startsWith('mcp__') && ns > 0
      ? { namespace: vendor.slice(0, ns), name: vendor.slice(ns + 2) }
      : { name: vendor };
  return { type: 'function_call', ...where, arguments: JSON.stringify(vendorInput(vendor, input)) };
}

async function stream(
  res: ServerResponse,
  parts: LanguageModelV3StreamPart[],
  naming: ToolNaming,
  _url: string,
  body: Record<string, unknown>,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const ev = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const id = `resp_${Date.now()}${Math.random().toString(36).slice(2, 8)}`;
  const usage = finishOf(parts);
  const { text, calls } = replyOf(parts);
  ev('response.created', { response: { id, status: 'in_progress' } });
  let index = 0;
  if (text) {
    const item = {
      type: 'message',
      id: `msg_${id}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    };
    ev('response.output_item.added', { output_index: index, item: { ...item, content: [] } });
    ev('response.output_text.delta', { output_index: index, item_id: item.id, content_index: 0, delta: text });
    ev('response.output_item.done', { output_index: index, item });
    index++;
  }
  const tools = offered(body);
  for (const c of calls) {
    const item = {
      ...callItem(naming.toVendor(c.name), c.input, tools),
      id: `fc_${c.id}_${id}`,
      call_id: `call_${c.id}_${id}`,
      status: 'completed',
    };
    ev('response.output_item.added', { output_index: index, item });
    ev('response.output_item.done', { output_index: index, item });
    index++;
  }
  ev('response.completed', {
    response: {
      id,
      status: 'completed',
      usage: {
        input_tokens: usage.input,
        output_tokens: Math.max(1, usage.output),
        total_tokens: usage.input + Math.max(1, usage.output),
      },
    },
  });
  res.end();
}
