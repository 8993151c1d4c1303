import type { LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadScriptedModel } from '../../src/model/scripted/index.js';
import { anthropicWire } from './wire-anthropic.js';
import { geminiWire } from './wire-gemini.js';
import { responsesWire } from './wire-responses.js';
import type { Adapter, ToolNaming } from './wire.js';

export { namingFor, type ToolNaming } from './wire.js';

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
  /** When each scripted request arrived (performance.now() in this process), for bench/. */
  promptTimes: number[];
  /** Each scripted request's body as the CLI sent it (for a failing test's message). */
  bodies: Record<string, unknown>[];
  /** Tool names the CLI offered in each scripted request (vendor spelling). */
  tools: string[][];
  /** The credential each scripted request carried: its Authorization header, else its API-key header. */
  auth: string[];
  /**
   * While set, every request is refused with this status and the vendor's own error body
   * (401: a revoked key or an expired login), counted in `rejected`.
   */
  reject: 401 | 403 | null;
  rejected: number;
  /**
   * While set, a request whose credential (as in `auth`) this refuses is answered 401 like
   * `reject` — the vendor refusing an expired token — and counted in `rejected`.
   */
  accepts?: ((credential: string) => boolean) | undefined;
  /** The text of every user turn and tool result the model was shown, across all requests. */
  seen(): string;
  close(): Promise<void>;
}

export async function startFakeVendor(
  wire: Wire,
  scriptFile: string,
  naming: ToolNaming,
  env: Record<string, string | undefined> = process.env,
): Promise<FakeVendor> {
  const model = loadScriptedModel(scriptFile, { env });
  const prompts: LanguageModelV3Prompt[] = [];
  const promptTimes: number[] = [];
  const bodies: Record<string, unknown>[] = [];
  const tools: string[][] = [];
  const auth: string[] = [];
  const self = { reject: null, rejected: 0 } as FakeVendor;
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
    const h = req.headers;
    const credential = String(h.authorization ?? h['x-api-key'] ?? h['x-goog-api-key'] ?? '');
    const refusal = self.reject ?? (self.accepts && !self.accepts(credential) ? 401 : null);
    if (refusal) {
      self.rejected++;
      res.writeHead(refusal, { 'content-type': 'application/json' });
      res.end(REJECTIONS[wire](refusal));
      return;
    }
    // FAKE_VENDOR_LOG=<file>: every request, for working out what a new CLI version sends.
    if (process.env.FAKE_VENDOR_LOG)
      appendFileSync(process.env.FAKE_VENDOR_LOG, `=== ${req.method ?? ''} ${req.url ?? ''}\n${raw}\n`);
    if (!adapter.isModelCall(req.method ?? 'GET', req.url ?? '/')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(adapter.otherReply(req.url ?? '/'));
      return;
    }
    if (!adapter.hasTools(body)) {
      // A request for JSON (Gemini's model router asks how complex the task is) gets JSON of its schema.
      const schema = jsonSchemaOf(body);
      await adapter.stream(
        res,
        textParts(schema ? JSON.stringify(instanceOf(schema)) : 'ok'),
        naming,
        req.url ?? '/',
        body,
      );
      return;
    }
    const prompt = adapter.toPrompt(body, naming);
    prompts.push(prompt);
    promptTimes.push(performance.now());
    bodies.push(body);
    tools.push(adapter.toolNames(body));
    auth.push(credential);
    const result = await model.doStream({ prompt, tools: [] } as never);
    const parts: LanguageModelV3StreamPart[] = [];
    const reader = result.stream.getReader();
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      parts.push(next.value);
    }
    await adapter.stream(res, parts, naming, req.url ?? '/', body);
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  Object.assign(self, {
    url: `http://127.0.0.1:${port}`,
    prompts,
    promptTimes,
    bodies,
    tools,
    auth,
    seen: () => prompts.flatMap((p) => p.flatMap(messageTexts)).join('\n'),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
  return self;
}

function messageTexts(m: LanguageModelV3Message): string[] {
  if (m.role === 'system') return [];
  if (m.role === 'user') return m.content.map((p) => (p.type === 'text' ? p.text : ''));
  if (m.role === 'tool') return m.content.map((p) => (p.type === 'tool-result' ? JSON.stringify(p.output) : ''));
  return [];
}

/** The JSON schema a request asks its answer to follow (Gemini's `generationConfig`), if any. */
function jsonSchemaOf(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const config = body.generationConfig as { responseJsonSchema?: unknown; responseSchema?: unknown } | undefined;
  const schema = config?.responseJsonSchema ?? config?.responseSchema;
  return schema && typeof schema === 'object' ? (schema as Record<string, unknown>) : undefined;
}

/** The smallest value of a JSON schema's shape: every property filled, numbers 1, strings "ok". */
function instanceOf(schema: Record<string, unknown>): unknown {
  const type = String(schema.type ?? 'object').toLowerCase();
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (type === 'object') {
    const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, instanceOf(v)]));
  }
  if (type === 'array') return [];
  if (type === 'integer' || type === 'number') return 1;
  if (type === 'boolean') return true;
  return 'ok';
}

function textParts(text: string): LanguageModelV3StreamPart[] {
  return [
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: text },
    { type: 'text-end', id: 't' },
    {
      type: 'finish',
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
    },
  ];
}

/** Each API's own body for a refused credential, as the CLI would read it from the vendor. */
const REJECTIONS: Record<Wire, (status: number) => string> = {
  anthropic: (s) =>
    JSON.stringify({
      type: 'error',
      error: {
        type: s === 401 ? 'authentication_error' : 'permission_error',
        message: s === 401 ? 'invalid x-api-key' : 'Your API key does not have permission to use this resource.',
      },
    }),
  responses: (s) =>
    JSON.stringify({
      error: {
        message:
          s === 401
            ? 'Incorrect API key provided: sk-fake***. You can find your API key at https://platform.openai.com/account/api-keys.'
            : 'You are not allowed to sample from this model',
        type: 'invalid_request_error',
        param: null,
        code: s === 401 ? 'invalid_api_key' : null,
      },
    }),
  gemini: (s) =>
    JSON.stringify({
      error: {
        code: s,
        message:
          s === 401
            ? 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.'
            : 'The caller does not have permission',
        status: s === 401 ? 'UNAUTHENTICATED' : 'PERMISSION_DENIED',
      },
    }),
};

const ADAPTERS: Record<Wire, Adapter> = {
  anthropic: anthropicWire,
  responses: responsesWire,
  gemini: geminiWire,
};
