import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LanguageModelV3CallOptions, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { FlotillaError } from '../../src/errors.js';
import { runLoop } from '../../src/loop/index.js';
import { createModel, isScripted } from '../../src/model/index.js';
import {
  ScriptedModel,
  ScriptedModelError,
  loadScriptedModel,
  type ScriptInput,
} from '../../src/model/scripted/index.js';
import { tempDir } from '../helpers/fleet.js';
import { collect, doneOf, echoTool, fixture, toolContext } from '../loop/fixture-tools.js';

const user = (text: string): LanguageModelV3Prompt[number] => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): LanguageModelV3Prompt[number] => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
});
const toolResult = (toolName: string, value: string, error = false): LanguageModelV3Prompt[number] => ({
  role: 'tool',
  content: [
    { type: 'tool-result', toolCallId: 'c1', toolName, output: { type: error ? 'error-text' : 'text', value } },
  ],
});

async function streamOf(
  model: ScriptedModel,
  prompt: LanguageModelV3Prompt,
  extra: Partial<LanguageModelV3CallOptions> = {},
) {
  const { stream } = await model.doStream({ prompt, ...extra });
  const parts: LanguageModelV3StreamPart[] = [];
  for await (const p of stream) parts.push(p);
  const text = parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');
  const calls = parts.flatMap((p) => (p.type === 'tool-call' ? [p] : []));
  return { parts, text, calls };
}

const reply = async (script: ScriptInput, prompt: LanguageModelV3Prompt) =>
  (await streamOf(new ScriptedModel(script), prompt)).text;

describe('scripted model: choosing replies', () => {
  it('plays replies in order and answers the exhausted text at the end', async () => {
    const s: ScriptInput = [{ text: 'one' }, { text: 'two' }];
    expect(await reply(s, [user('go')])).toBe('one');
    expect(await reply(s, [user('go'), assistant('one'), user('more')])).toBe('two');
    expect(await reply(s, [user('go'), assistant('one'), user('more'), assistant('two'), user('more')])).toBe(
      '[script exhausted]',
    );
    expect(await reply({ exhausted: 'no more after turn {{turn}}', replies: [] }, [user('x')])).toBe(
      'no more after turn 1',
    );
  });

  it('holds a guarded reply until its guard matches, while later replies play', async () => {
    const s: ScriptInput = [
      { when: { kind: 'inbox' }, text: 'got mail' },
      { text: 'working' },
      { text: 'still working' },
    ];
    const p1 = [user('task')];
    expect(await reply(s, p1)).toBe('working');
    const p2 = [...p1, assistant('working'), user('<inbox-message id=1 from=w>hi</inbox-message>')];
    expect(await reply(s, p2)).toBe('got mail');
    // Replay knows 'working' and 'got mail' were both used.
    expect(await reply(s, [...p2, assistant('got mail'), user('next')])).toBe('still working');
  });

  it('guards on contains, matches, kind, tool and tool errors (all must hold)', async () => {
    const s: ScriptInput = [
      { when: { kind: 'tool_error', tool: 'shell' }, text: 'shell failed', repeat: true },
      { when: { kind: 'tool_result', contains: 'README' }, text: 'found readme', repeat: true },
      { when: { matches: '^\\d+ files?$' }, text: 'counted', repeat: true },
      { when: { kind: ['user', 'inbox'] }, text: 'heard you', repeat: true },
    ];
    const before = [user('task'), assistant('calling')];
    expect(await reply(s, [...before, toolResult('shell', 'exit 1', true)])).toBe('shell failed');
    expect(await reply(s, [...before, toolResult('read', 'exit 1', true)])).toBe('[script exhausted]');
    expect(await reply(s, [...before, toolResult('glob', 'README.md\nsrc')])).toBe('found readme');
    expect(await reply(s, [...before, toolResult('glob', '12 files')])).toBe('counted');
    expect(await reply(s, [...before, user('hello')])).toBe('heard you');
  });

  it('repeat keeps a reply available', async () => {
    const s: ScriptInput = [{ text: 'again', repeat: true }];
    expect(await reply(s, [user('a'), assistant('again'), user('b'), assistant('again'), user('c')])).toBe('again');
  });

  it('derives its position from the history, so a fresh instance resumes a conversation exactly', async () => {
    const first = loadScriptedModel(fixture('three-tools.yaml'));
    const run1 = doneOf(
      await collect(
        runLoop({
          model: first,
          system: 's',
          messages: [{ role: 'user', content: 'go' }],
          tools: [echoTool],
          toolContext,
          maxTurns: 1,
          timeoutMs: 10_000,
        }),
      ),
    );
    expect(run1.reason).toBe('max_turns');
    // A different process (a fresh model) continues from the transcript.
    const second = loadScriptedModel(fixture('three-tools.yaml'));
    const run2 = doneOf(
      await collect(
        runLoop({
          model: second,
          system: 's',
          messages: run1.messages,
          tools: [echoTool],
          toolContext,
          maxTurns: 5,
          timeoutMs: 10_000,
        }),
      ),
    );
    expect(run2).toMatchObject({ reason: 'completed', text: 'Done: echo: three', turns: 1 });
  });
});

describe('scripted model: output', () => {
  it('renders templates from the prompt into text and tool inputs, with filters', async () => {
    const model = new ScriptedModel(
      [
        {
          text: 'Task was "{{task | first_line}}"; tool said {{last_tool_result | truncate:5}}; you said {{last_user}}; I am {{env.AGENT}}; turn {{turn}}',
          tool_calls: [
            {
              tool: 'echo',
              input: { text: '{{last_message | one_line}}', nested: ['{{last_tool_result | last_line}}'] },
            },
          ],
        },
      ],
      { env: { AGENT: 'lead-1' } },
    );
    const prompt = [
      user('fix bugs\nin src'),
      assistant('looking'),
      toolResult('read', 'line one\nline two'),
      user('hurry'),
    ];
    // The first reply is used at the first assistant message, so ask it on a fresh history with the same inputs.
    const fresh = [user('fix bugs\nin src'), toolResult('read', 'line one\nline two'), user('hurry')];
    const { text, calls } = await streamOf(model, fresh);
    expect(text).toBe('Task was "fix bugs"; tool said line …; you said hurry; I am lead-1; turn 1');
    expect(JSON.parse(calls[0]!.input)).toEqual({
      text: 'fix bugs in src line one line two hurry',
      nested: ['line two'],
    });
    expect(calls[0]!.toolCallId).toBe('call_1_1');
    expect((await streamOf(model, prompt)).text).toBe('[script exhausted]');
  });

  it('streams text in chunk_chars pieces, then tool calls, then usage', async () => {
    const model = new ScriptedModel({
      defaults: { chunk_chars: 3 },
      replies: [{ text: 'abcdefgh', tool_calls: [{ tool: 'echo', input: { text: 'x' } }], usage: { input_tokens: 7 } }],
    });
    const { parts } = await streamOf(model, [user('go')]);
    expect(parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : []))).toEqual(['abc', 'def', 'gh']);
    expect(parts.map((p) => p.type)).toEqual([
      'stream-start',
      'text-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-end',
      'tool-input-start',
      'tool-input-delta',
      'tool-input-end',
      'tool-call',
      'finish',
    ]);
    const finish = parts.at(-1);
    expect(finish?.type === 'finish' && finish.usage.inputTokens.total).toBe(7);
    expect(finish?.type === 'finish' && finish.usage.outputTokens.total).toBeGreaterThan(0);
    expect(finish?.type === 'finish' && finish.finishReason.unified).toBe('tool-calls');
  });

  it('doGenerate returns the same reply as content', async () => {
    const model = new ScriptedModel([
      { text: 'hi', tool_calls: [{ tool: 'echo', input: { text: 'x' }, id: 'fixed' }] },
    ]);
    const r = await model.doGenerate({ prompt: [user('go')] });
    expect(r.content).toEqual([
      { type: 'text', text: 'hi' },
      { type: 'tool-call', toolCallId: 'fixed', toolName: 'echo', input: '{"text":"x"}' },
    ]);
    expect(r.finishReason.unified).toBe('tool-calls');
  });

  it('honours the abort signal during latency', async () => {
    const model = new ScriptedModel([{ text: 'late', latency_ms: 60_000 }]);
    const ac = new AbortController();
    const p = model.doStream({ prompt: [user('go')], abortSignal: ac.signal });
    ac.abort();
    await expect(p).rejects.toThrow(/abort/i);
  });

  it('fails like a provider: status, message, retryable only for 408/409/429/5xx', async () => {
    const err = await new ScriptedModel([{ error: { status: 429, message: 'rate limited' } }])
      .doStream({ prompt: [user('x')] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScriptedModelError);
    expect(err).toMatchObject({ statusCode: 429, isRetryable: true, message: 'rate limited' });
    const calls: number[] = [];
    const model = new ScriptedModel([{ error: { status: 400, message: 'bad request: prompt too long' } }], {
      onCall: (c) => calls.push(c.turn),
    });
    const done = doneOf(
      await collect(
        runLoop({
          model,
          system: '',
          messages: [{ role: 'user', content: 'x' }],
          tools: [],
          toolContext,
          maxTurns: 3,
          timeoutMs: 10_000,
          retryDelayMs: 1,
        }),
      ),
    );
    expect(done).toMatchObject({ reason: 'failed', error: 'model call failed: bad request: prompt too long' });
    expect(calls).toEqual([1]);
  });
});

describe('scripted model: files', () => {
  it('rejects bad scripts with the field and a pointer to the docs', () => {
    expect(() => new ScriptedModel([{ text: 'x', when: { kind: 'email' } } as never])).toThrow(
      /replies\.0\.when\.kind/,
    );
    expect(() => new ScriptedModel([{ repeat: true }])).toThrow(/a reply needs text, tool_calls or error/);
    expect(() => new ScriptedModel([{ text: '{{last_tool}}' }])).toThrow(
      /unknown template variable '\{\{last_tool\}\}'/,
    );
    expect(() => new ScriptedModel([{ text: '{{task | shout}}' }])).toThrow(/unknown template filter 'shout'/);
    expect(() => new ScriptedModel([{ text: 'x', when: { matches: '(' } }])).toThrow(/when\.matches/);
    expect(() => new ScriptedModel([{ text: 'x' }])).not.toThrow();
  });

  it('loads script: models through createModel, relative to cwd, with clear errors', async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(join(dir, 'demo.yaml'), 'replies:\n  - text: "hello from {{env.WHO}}"\n');
      writeFileSync(join(dir, 'broken.yaml'), 'replies: [text: "a"\n');
      const config = configSchema.parse({});
      const model = await createModel('script:demo.yaml', config, { WHO: 'the script' }, { cwd: dir });
      expect(isScripted('script:demo.yaml')).toBe(true);
      expect(model.provider).toBe('script');
      const done = doneOf(
        await collect(
          runLoop({
            model,
            system: '',
            messages: [{ role: 'user', content: 'hi' }],
            tools: [],
            toolContext,
            maxTurns: 2,
            timeoutMs: 10_000,
          }),
        ),
      );
      expect(done.text).toBe('hello from the script');
      await expect(createModel('script:missing.yaml', config, {}, { cwd: dir })).rejects.toThrow(
        /cannot read scripted model file .*missing\.yaml/,
      );
      await expect(createModel('script:broken.yaml', config, {}, { cwd: dir })).rejects.toThrow(/not valid YAML/);
    } finally {
      cleanup();
    }
  });
});

describe('createModel errors', () => {
  const config = configSchema.parse({});
  it('names a missing API key and what to do', async () => {
    await expect(createModel('anthropic:claude-sonnet-4-5', config, {})).rejects.toThrow(
      "model 'anthropic:claude-sonnet-4-5' needs ANTHROPIC_API_KEY, which is not set — export it, or choose another model with --model",
    );
    await expect(createModel('openai:gpt-5', config, {})).rejects.toThrow(/needs OPENAI_API_KEY/);
  });

  it('names an unconfigured openai-compatible provider and how to add it', async () => {
    const err = await createModel('openai-compatible:lab/llama', config, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FlotillaError);
    expect(String(err)).toContain('add models.providers.lab: {base_url: …, api_key_env: …}');
  });

  it('requires the key named by api_key_env', async () => {
    const c = configSchema.parse({
      models: { providers: { lab: { base_url: 'http://127.0.0.1:9/v1', api_key_env: 'LAB_KEY' } } },
    });
    await expect(createModel('openai-compatible:lab/llama', c, {})).rejects.toThrow(/needs LAB_KEY/);
    const model = await createModel('openai-compatible:lab/llama', c, { LAB_KEY: 'k' });
    expect(model.modelId).toBe('llama');
  });
});
