import { describe, expect, it } from 'vitest';
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { runLoop, type Injection, type LoopEvent, type LoopOptions } from '../../src/loop/index.js';
import { ScriptedModel, loadScriptedModel, type ScriptedCall } from '../../src/model/scripted/index.js';
import { collect, doneOf, echoTool, failingTool, fixture, napTool, toolContext } from './fixture-tools.js';

function base(model: LoopOptions['model'], extra: Partial<LoopOptions> = {}): LoopOptions {
  return {
    model,
    system: 'You are a test agent.',
    messages: [{ role: 'user', content: 'Do the task.' }],
    tools: [echoTool, napTool, failingTool],
    toolContext,
    maxTurns: 10,
    timeoutMs: 30_000,
    retryDelayMs: 1,
    ...extra,
  };
}

/** Events with the one non-deterministic field (durations) checked and removed. */
function normalize(events: LoopEvent[]): unknown[] {
  return events.map((e) => {
    if (e.type !== 'tool_result') return e;
    expect(e.durationMs).toBeGreaterThanOrEqual(0);
    const { durationMs: _d, ...rest } = e;
    return rest;
  });
}

describe('runLoop on the scripted model', () => {
  it('produces the exact event sequence for text plus three tool calls', async () => {
    const events = await collect(runLoop(base(loadScriptedModel(fixture('three-tools.yaml')))));
    const call = (n: number, text: string) => ({ id: `call_1_${n}`, name: 'echo', input: { text } });
    const assistant1 = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me look around.' },
        { type: 'tool-call', toolCallId: 'call_1_1', toolName: 'echo', input: { text: 'one' } },
        { type: 'tool-call', toolCallId: 'call_1_2', toolName: 'echo', input: { text: 'two' } },
        { type: 'tool-call', toolCallId: 'call_1_3', toolName: 'echo', input: { text: 'three' } },
      ],
    };
    const toolMsg = {
      role: 'tool',
      content: ['one', 'two', 'three'].map((t, i) => ({
        type: 'tool-result',
        toolCallId: `call_1_${i + 1}`,
        toolName: 'echo',
        output: { type: 'text', value: `echo: ${t}` },
      })),
    };
    const assistant2 = { role: 'assistant', content: [{ type: 'text', text: 'Done: echo: three' }] };
    expect(normalize(events)).toEqual([
      { type: 'turn_start', turn: 1 },
      { type: 'text_delta', text: 'Let me loo' },
      { type: 'text_delta', text: 'k around.' },
      { type: 'usage', inputTokens: 100, outputTokens: 20 },
      { type: 'tool_call', call: call(1, 'one') },
      { type: 'tool_result', call: call(1, 'one'), result: { output: 'echo: one' } },
      { type: 'tool_call', call: call(2, 'two') },
      { type: 'tool_result', call: call(2, 'two'), result: { output: 'echo: two' } },
      { type: 'tool_call', call: call(3, 'three') },
      { type: 'tool_result', call: call(3, 'three'), result: { output: 'echo: three' } },
      { type: 'turn_end', turn: 1, messages: [assistant1, toolMsg] },
      { type: 'turn_start', turn: 2 },
      { type: 'text_delta', text: 'Done: echo' },
      { type: 'text_delta', text: ': three' },
      { type: 'usage', inputTokens: 150, outputTokens: 5 },
      { type: 'turn_end', turn: 2, messages: [assistant2] },
      {
        type: 'done',
        reason: 'completed',
        text: 'Done: echo: three',
        turns: 2,
        usage: { inputTokens: 250, outputTokens: 25 },
        messages: [{ role: 'user', content: 'Do the task.' }, assistant1, toolMsg, assistant2],
      },
    ]);
  });

  it('stops at max_turns when the model keeps calling tools', async () => {
    const events = await collect(runLoop(base(loadScriptedModel(fixture('forever.yaml')), { maxTurns: 3 })));
    const done = doneOf(events);
    expect(done.reason).toBe('max_turns');
    expect(done.turns).toBe(3);
    expect(events.filter((e) => e.type === 'tool_result')).toHaveLength(3);
    expect(done.text).toBe('again');
  });

  it('ends with timeout when the wall clock runs out mid-stream, keeping what was shown', async () => {
    const events = await collect(runLoop(base(loadScriptedModel(fixture('slow.yaml')), { timeoutMs: 500 })));
    const done = doneOf(events);
    expect(done.reason).toBe('timeout');
    const shown = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(
      'This reply takes a long time to arrive, chunk by chunk by chunk by chunk.'.length,
    );
    expect(done.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: shown }] });
  });

  it('ends with timeout during a tool and interrupts the tool through its signal', async () => {
    // 2 s: the model's reply must be in and the tool started before the clock runs out, on a loaded machine too.
    const events = await collect(runLoop(base(loadScriptedModel(fixture('slow-tool.yaml')), { timeoutMs: 2_000 })));
    const done = doneOf(events);
    expect(done.reason).toBe('timeout');
    const results = events.filter((e) => e.type === 'tool_result');
    expect(results).toHaveLength(1);
    expect(results[0]!.type === 'tool_result' && results[0]!.result).toMatchObject({
      isError: true,
      output: expect.stringContaining('interrupted'),
    });
    // The history stays valid: both calls have results, the second one marked as not run.
    const toolMsg = done.messages.at(-1);
    expect(toolMsg?.role).toBe('tool');
    expect(JSON.stringify(toolMsg)).toContain('Not run');
  });

  it('ends aborted when the caller aborts, and the messages continue in a new run', async () => {
    const ac = new AbortController();
    const model = loadScriptedModel(fixture('slow-tool.yaml'));
    const gen = runLoop(base(model, { signal: ac.signal }));
    const events: LoopEvent[] = [];
    for await (const e of gen) {
      events.push(e);
      if (e.type === 'tool_call') ac.abort();
    }
    const done = doneOf(events);
    expect(done.reason).toBe('aborted');
    // Course correction: the harness appends the person's line and runs again from the same history.
    const again = await collect(
      runLoop(base(model, { messages: [...done.messages, { role: 'user', content: 'never mind, just finish' }] })),
    );
    expect(doneOf(again)).toMatchObject({ reason: 'completed', text: 'Woke up.', turns: 1 });
  });

  it('ends aborted before any model call when the signal is already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    const events = await collect(runLoop(base(loadScriptedModel(fixture('three-tools.yaml')), { signal: ac.signal })));
    expect(events).toHaveLength(1);
    expect(doneOf(events)).toMatchObject({ reason: 'aborted', turns: 0 });
  });

  it('ends failed with the message when the provider returns 500, after retries', async () => {
    const calls: ScriptedCall[] = [];
    const model = loadScriptedModel(fixture('fail-500.yaml'), { onCall: (c) => calls.push(c) });
    const done = doneOf(await collect(runLoop(base(model, { maxRetries: 2 }))));
    expect(done.reason).toBe('failed');
    expect(done.error).toContain('Internal server error (scripted)');
    expect(calls).toHaveLength(3);
  });

  it('retries transient failures and then completes', async () => {
    const calls: ScriptedCall[] = [];
    const model = loadScriptedModel(fixture('flaky.yaml'), { onCall: (c) => calls.push(c) });
    const done = doneOf(await collect(runLoop(base(model, { maxRetries: 3 }))));
    expect(done).toMatchObject({ reason: 'completed', text: 'Third time lucky.' });
    expect(calls).toHaveLength(3);
  });

  it('ends failed when the model throws a plain error', async () => {
    const model = new ScriptedModel([{ text: 'unused' }]);
    model.doStream = () => Promise.reject(new Error('socket hang up'));
    const done = doneOf(await collect(runLoop(base(model))));
    expect(done).toMatchObject({ reason: 'failed', turns: 1 });
    expect(done.error).toContain('socket hang up');
  });

  it('puts pending injections into the next model input, after the tool results', async () => {
    const prompts: LanguageModelV3Prompt[] = [];
    const model = loadScriptedModel(fixture('inbox-aware.yaml'), { onCall: (c) => prompts.push(c.prompt) });
    const queue: Injection[][] = [
      [],
      [{ source: 'inbox', text: '<inbox-message id=m1 from=worker-1>found 3 TODOs</inbox-message>', ids: ['m1'] }],
    ];
    const events = await collect(runLoop(base(model, { pending: async () => queue.shift() ?? [] })));
    const surfaced = events.filter((e) => e.type === 'message_surfaced');
    expect(surfaced).toHaveLength(1);
    expect(surfaced[0]).toMatchObject({ injection: { source: 'inbox', ids: ['m1'] } });
    expect(prompts).toHaveLength(2);
    const second = prompts[1]!;
    // system, task, assistant (tool call), tool results, then the injection as a user turn.
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(JSON.stringify(second.at(-1))).toContain('found 3 TODOs');
    expect(doneOf(events)).toMatchObject({
      reason: 'completed',
      text: 'Noted the message: <inbox-message id=m1 from=worker-1>found 3 TODOs</inbox-mess…',
    });
  });

  it('answers a line typed during the final answer instead of completing', async () => {
    const model = loadScriptedModel(fixture('inbox-aware.yaml'));
    let calls = 0;
    const pending = async (): Promise<Injection[]> =>
      ++calls === 4 ? [{ source: 'human', text: 'please stop now' }] : [];
    const events = await collect(runLoop(base(model, { pending })));
    expect(events.filter((e) => e.type === 'message_surfaced')).toHaveLength(1);
    expect(doneOf(events)).toMatchObject({ reason: 'completed', text: 'Stopping as asked.', turns: 3 });
  });

  it('stops with budget before a model call when the budget check says so', async () => {
    let checks = 0;
    const events = await collect(
      runLoop(
        base(loadScriptedModel(fixture('three-tools.yaml')), {
          beforeModelCall: async () => (++checks === 2 ? 'tree budget of 200 tokens used' : undefined),
        }),
      ),
    );
    expect(doneOf(events)).toMatchObject({ reason: 'budget', error: 'tree budget of 200 tokens used', turns: 1 });
  });
});

describe('tool errors are written for the model', () => {
  const run = async (
    toolCalls: { tool: string; input: Record<string, unknown> }[],
    extra: Partial<LoopOptions> = {},
  ) => {
    const model = new ScriptedModel([{ text: 'trying', tool_calls: toolCalls }, { text: 'ok' }]);
    const events = await collect(runLoop(base(model, extra)));
    return events.flatMap((e) => (e.type === 'tool_result' ? [e.result] : []));
  };

  it('names the available tools for an unknown tool', async () => {
    const [r] = await run([{ tool: 'fly', input: {} }]);
    expect(r).toEqual({
      isError: true,
      output: "Unknown tool 'fly'. Available tools: echo, nap, explode. Call one of these by its exact name.",
    });
  });

  it('says what was received and how to fix invalid input', async () => {
    const [r] = await run([{ tool: 'echo', input: { text: 42 } }]);
    expect(r?.isError).toBe(true);
    expect(r?.output).toContain('Invalid input for echo:');
    expect(r?.output).toContain("Fix the fields above and call 'echo' again.");
    expect(r?.output).toMatch(/- text: .*expected string/);
    expect(r?.output).toContain('You sent: {"text":42}');
    expect(r?.output).toContain('Fields: text (string, required)');
  });

  it('turns a thrown error into an error result and goes on', async () => {
    const [r] = await run([{ tool: 'explode', input: {} }]);
    expect(r).toMatchObject({ isError: true, output: 'explode failed unexpectedly: kaboom: disk on fire' });
  });

  it('returns a gate denial to the model and skips PostToolUse', async () => {
    const after: string[] = [];
    const results = await run(
      [
        { tool: 'echo', input: { text: 'a' } },
        { tool: 'nap', input: { ms: 5 } },
      ],
      {
        gate: async (call) =>
          call.name === 'nap' ? { allow: false, reason: "policy: tool 'nap' needs approval" } : { allow: true },
        afterTool: async (call) => {
          after.push(call.name);
        },
      },
    );
    expect(results[0]).toEqual({ output: 'echo: a' });
    expect(results[1]?.isError).toBe(true);
    expect(results[1]?.output).toContain("policy: tool 'nap' needs approval");
    expect(after).toEqual(['echo']);
  });

  it('fails the run (without throwing) when a callback throws, keeping the history valid', async () => {
    const model = new ScriptedModel([{ text: 'x', tool_calls: [{ tool: 'echo', input: { text: 'a' } }] }]);
    const events = await collect(runLoop(base(model, { gate: () => Promise.reject(new Error('hook crashed')) })));
    const done = doneOf(events);
    expect(done).toMatchObject({ reason: 'failed', error: 'hook crashed' });
    expect(done.messages.at(-1)?.role).toBe('tool');
  });
});

describe('stopping while a person is asked to approve', () => {
  it('an abort during a pending approval ends aborted with a valid history', async () => {
    const ac = new AbortController();
    const model = new ScriptedModel([
      { text: 'x', tool_calls: [{ tool: 'echo', input: { text: 'a' } }] },
      { text: 'after' },
    ]);
    let asked = false;
    const gate = (_call: unknown, _tool: unknown, signal: AbortSignal) =>
      new Promise<{ allow: true }>((resolve) => {
        asked = true;
        // A person who never answers; the harness would also cancel its question on abort.
        signal.addEventListener('abort', () => setTimeout(() => resolve({ allow: true }), 10_000).unref());
        setTimeout(() => ac.abort(), 20);
      });
    const events = await collect(runLoop(base(model, { signal: ac.signal, gate })));
    const done = doneOf(events);
    expect(asked).toBe(true);
    const result = events.find((e) => e.type === 'tool_result');
    expect(result?.type === 'tool_result' && result.result.output).toContain('stopped before approval');
    expect(done.reason).toBe('aborted');
    expect(done.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });
});
