import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { runLoop, type LoopEvent } from '../../src/loop/index.js';
import { createModel } from '../../src/model/index.js';
import { collect, doneOf, echoTool, toolContext } from './fixture-tools.js';

/**
 * The real provider packages against a local HTTP server that replays recorded response
 * shapes (from the providers' public API docs), driven through runLoop: the wiring from
 * HTTP bytes to loop events is exercised without a network.
 */

interface Recorded {
  path: string;
  body: Record<string, unknown>;
}
type Reply = (res: ServerResponse) => void;

async function replayServer(replies: Reply[]): Promise<{ url: string; requests: Recorded[]; server: Server }> {
  const requests: Recorded[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', body: JSON.parse(raw || '{}') as Record<string, unknown> });
      const reply = replies.length > 1 ? replies.shift()! : replies[0]!;
      reply(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, server };
}

function sse(events: [string | undefined, unknown][]): Reply {
  return (res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [event, data] of events) {
      res.write(
        `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
      );
    }
    res.end();
  };
}

function status(code: number, body: unknown): Reply {
  return (res) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

const anthropicToolUse = sse([
  [
    'message_start',
    {
      type: 'message_start',
      message: {
        id: 'msg_01',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 472, output_tokens: 2 },
      },
    },
  ],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['ping', { type: 'ping' }],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Okay, let me ' } },
  ],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'echo that.' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  [
    'content_block_start',
    {
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'echo', input: {} },
    },
  ],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } },
  ],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"text": "hel' } },
  ],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: 'lo world"}' } },
  ],
  ['content_block_stop', { type: 'content_block_stop', index: 1 }],
  [
    'message_delta',
    { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 89 } },
  ],
  ['message_stop', { type: 'message_stop' }],
]);

const anthropicFinal = sse([
  [
    'message_start',
    {
      type: 'message_start',
      message: {
        id: 'msg_02',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 600, output_tokens: 1 },
      },
    },
  ],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'It said hello world.' } },
  ],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  [
    'message_delta',
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 6 } },
  ],
  ['message_stop', { type: 'message_stop' }],
]);

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'chatcmpl-123',
  object: 'chat.completion.chunk',
  created: 1_694_268_190,
  model: 'llama3',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
});

const openaiToolCall = sse([
  [undefined, chunk({ role: 'assistant', content: 'Echoing now.' })],
  [
    undefined,
    chunk({
      tool_calls: [{ index: 0, id: 'call_abc123', type: 'function', function: { name: 'echo', arguments: '' } }],
    }),
  ],
  [undefined, chunk({ tool_calls: [{ index: 0, function: { arguments: '{"text":' } }] })],
  [undefined, chunk({ tool_calls: [{ index: 0, function: { arguments: ' "from openai"}' } }] })],
  [undefined, chunk({}, 'tool_calls')],
  [
    undefined,
    {
      id: 'chatcmpl-123',
      object: 'chat.completion.chunk',
      created: 1_694_268_190,
      model: 'llama3',
      choices: [],
      usage: { prompt_tokens: 82, completion_tokens: 17, total_tokens: 99 },
    },
  ],
  [undefined, '[DONE]'],
]);

const openaiFinal = sse([
  [undefined, chunk({ role: 'assistant', content: 'It echoed ' })],
  [undefined, chunk({ content: 'from openai.' })],
  [undefined, chunk({}, 'stop')],
  [undefined, '[DONE]'],
]);

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function drive(spec: string, env: Record<string, string>, config = configSchema.parse({})): Promise<LoopEvent[]> {
  const model = await createModel(spec, config, env);
  return collect(
    runLoop({
      model,
      system: 'You are a test agent.',
      messages: [{ role: 'user', content: 'Echo hello world.' }],
      tools: [echoTool],
      toolContext,
      maxTurns: 5,
      timeoutMs: 30_000,
      maxRetries: 2,
      retryDelayMs: 1,
    }),
  );
}

describe('provider wiring through runLoop (local replay server)', () => {
  it('anthropic: text and a streamed tool_use reach the loop; the tool result goes back', async () => {
    const srv = await replayServer([anthropicToolUse, anthropicFinal]);
    servers.push(srv.server);
    const events = await drive('anthropic:claude-sonnet-4-5', {
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: `${srv.url}/v1`,
    });

    const text = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');
    expect(text).toBe('Okay, let me echo that.It said hello world.');
    const call = events.find((e) => e.type === 'tool_call');
    expect(call).toEqual({
      type: 'tool_call',
      call: { id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'echo', input: { text: 'hello world' } },
    });
    expect(events.find((e) => e.type === 'usage')).toEqual({ type: 'usage', inputTokens: 472, outputTokens: 89 });
    expect(doneOf(events)).toMatchObject({ reason: 'completed', text: 'It said hello world.', turns: 2 });

    expect(srv.requests.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages']);
    expect(srv.requests[0]!.body).toMatchObject({
      model: 'claude-sonnet-4-5',
      stream: true,
      tools: [{ name: 'echo' }],
    });
    // The second request carries the tool result for the tool_use id.
    expect(JSON.stringify(srv.requests[1]!.body.messages)).toContain('"tool_use_id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6"');
    expect(JSON.stringify(srv.requests[1]!.body.messages)).toContain('echo: hello world');
  });

  it('anthropic: a 500 ends the run failed after the retries', async () => {
    const srv = await replayServer([
      status(500, { type: 'error', error: { type: 'api_error', message: 'Internal server error' } }),
    ]);
    servers.push(srv.server);
    const done = doneOf(
      await drive('anthropic:claude-sonnet-4-5', { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: `${srv.url}/v1` }),
    );
    expect(done.reason).toBe('failed');
    expect(done.error).toContain('Internal server error');
    expect(srv.requests).toHaveLength(3);
  });

  it('openai-compatible: chat.completions chunks with delta.tool_calls reach the loop', async () => {
    const srv = await replayServer([openaiToolCall, openaiFinal]);
    servers.push(srv.server);
    const config = configSchema.parse({
      models: { providers: { local: { base_url: `${srv.url}/v1`, api_key_env: 'LOCAL_KEY' } } },
    });
    const events = await drive('openai-compatible:local/llama3', { LOCAL_KEY: 'k' }, config);

    expect(events.find((e) => e.type === 'tool_call')).toEqual({
      type: 'tool_call',
      call: { id: 'call_abc123', name: 'echo', input: { text: 'from openai' } },
    });
    expect(events.find((e) => e.type === 'usage')).toEqual({ type: 'usage', inputTokens: 82, outputTokens: 17 });
    expect(doneOf(events)).toMatchObject({ reason: 'completed', text: 'It echoed from openai.', turns: 2 });
    expect(srv.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
    expect(srv.requests[0]!.body).toMatchObject({
      model: 'llama3',
      stream: true,
      tools: [{ type: 'function', function: { name: 'echo' } }],
    });
    expect(JSON.stringify(srv.requests[1]!.body.messages)).toContain('"tool_call_id":"call_abc123"');
  });

  it('ollama: uses the configured base URL and fails after retries on 500', async () => {
    const srv = await replayServer([status(500, { error: { message: 'model runner crashed' } })]);
    servers.push(srv.server);
    const config = configSchema.parse({ models: { providers: { ollama: { base_url: `${srv.url}/v1` } } } });
    const done = doneOf(await drive('ollama:llama3', {}, config));
    expect(done.reason).toBe('failed');
    expect(done.error).toContain('model runner crashed');
    expect(srv.requests).toHaveLength(3);
    expect(srv.requests[0]!.path).toBe('/v1/chat/completions');
  });
});
