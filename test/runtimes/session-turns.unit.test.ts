import { describe, expect, it } from 'vitest';
import { claude } from '../../src/runtimes/claude.js';
import { codex } from '../../src/runtimes/codex.js';
import { gemini } from '../../src/runtimes/gemini.js';
import type { SessionTurn } from '../../src/runtimes/types.js';

/**
 * Each CLI's session file read as turns and its session id (docs/runtimes.md, "Resume and
 * transcript"). The lines are cut down from what the pinned CLIs wrote for one task (a prompt,
 * one shell command, a final answer); test/runtimes/resume.test.ts runs the real CLIs.
 */
const j = (o: unknown): string => JSON.stringify(o);

/** Role and the words of each turn, in order. */
function shape(turns: SessionTurn[]): string[] {
  return turns.map(({ message: m }) => {
    if (typeof m.content === 'string') return `${m.role}: ${m.content}`;
    return `${m.role}: ${m.content
      .map((p) => {
        if (p.type === 'text') return p.text;
        if (p.type === 'tool-call') return `call ${p.toolName} ${j(p.input)}`;
        if (p.type === 'tool-result') return `result ${p.toolName} ${j(p.output)}`;
        return p.type;
      })
      .join(' | ')}`;
  });
}

describe('session files as turns', () => {
  it('claude: prompt, text and tool_use blocks, the tool result, hook context; bookkeeping left out', () => {
    const text = [
      j({ type: 'permission-mode', permissionMode: 'dontAsk', sessionId: 's' }),
      j({ type: 'user', message: { role: 'user', content: 'first-task' }, timestamp: '2026-01-01T00:00:00.000Z' }),
      j({ type: 'attachment', attachment: { type: 'skill_listing', content: 'skills' } }),
      j({ type: 'attachment', attachment: { type: 'hook_additional_context', content: ['mail as data'] } }),
      j({ type: 'user', isMeta: true, message: { role: 'user', content: 'caveat' } }),
      j({ type: 'assistant', message: { id: 'm1', content: [{ type: 'text', text: 'Running one command.' }] } }),
      j({
        type: 'assistant',
        message: { id: 'm1', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'echo hi' } }] },
      }),
      j({
        type: 'user',
        message: {
          role: 'user',
          content: [{ tool_use_id: 't1', type: 'tool_result', content: 'hi', is_error: false }],
        },
      }),
      j({ type: 'assistant', message: { id: 'm2', content: [{ type: 'text', text: 'Final answer: done' }] } }),
      '{"type":"assistant","message":{"id":"m3","content":[{"type":"te', // a line still being written
    ].join('\n');
    const turns = claude.sessionTurns(text);
    expect(shape(turns)).toEqual([
      'user: first-task',
      'user: mail as data',
      'assistant: Running one command.',
      'assistant: call Bash {"command":"echo hi"}',
      'tool: result Bash {"type":"text","value":"hi"}',
      'assistant: Final answer: done',
    ]);
    expect(turns[0]!.ts).toBe('2026-01-01T00:00:00.000Z');
    expect(claude.sessionId('/x/projects/-tmp-p/8b5c52f6-501b-488b-a26e-dfdfc350ebe7.jsonl', text)).toBe(
      '8b5c52f6-501b-488b-a26e-dfdfc350ebe7',
    );
    expect(claude.sessionId('/x/projects/-tmp-p/notes.jsonl', text)).toBeUndefined();
  });

  it("claude: lines in the conversation's order (parentUuid), not the file's, as Claude Code may write a prompt after the model's first lines", () => {
    const line = (uuid: string, parentUuid: string | null, o: Record<string, unknown>) => j({ uuid, parentUuid, ...o });
    const text = [
      line('a1', 'u1', {
        type: 'assistant',
        message: { id: 'm1', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] },
      }),
      line('u1', null, { type: 'user', message: { role: 'user', content: 'the prompt' } }),
      line('r1', 'a1', {
        type: 'user',
        message: { role: 'user', content: [{ tool_use_id: 't1', type: 'tool_result', content: 'x' }] },
      }),
      line('a2', 'r1', { type: 'assistant', message: { id: 'm2', content: [{ type: 'text', text: 'done' }] } }),
      line('z1', 'z2', { type: 'user', message: { role: 'user', content: 'damaged: a parent cycle' } }),
      line('z2', 'z1', { type: 'user', message: { role: 'user', content: 'its twin' } }),
    ].join('\n');
    expect(shape(claude.sessionTurns(text))).toEqual([
      'user: the prompt',
      'assistant: call Bash {"command":"ls"}',
      'tool: result Bash {"type":"text","value":"x"}',
      'assistant: done',
      'user: its twin',
      'user: damaged: a parent cycle',
    ]);
  });

  it('codex: response items (user, hook text, assistant, function calls and outputs); its instructions and screen events left out', () => {
    const item = (payload: unknown) => j({ timestamp: '2026-01-01T00:00:01.000Z', type: 'response_item', payload });
    const text = [
      j({ type: 'session_meta', payload: { id: '01a21492-672a-7690-bcc6-f5fa67337a4a', cwd: '/tmp/p' } }),
      item({
        type: 'message',
        role: 'developer',
        content: [{ type: 'input_text', text: '<permissions instructions>\nrules' }],
      }),
      item({
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: '<environment_context>\n  <cwd>/tmp/p</cwd>' }],
      }),
      item({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first-task' }] }),
      item({
        type: 'message',
        role: 'developer',
        content: [{ type: 'input_text', text: 'New messages in your Flotilla inbox (1).' }],
      }),
      j({
        type: 'event_msg',
        payload: {
          type: 'item_completed',
          item: { type: 'AgentMessage', content: [{ type: 'Text', text: 'Running one command.' }] },
        },
      }),
      item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Running one command.' }] }),
      item({ type: 'function_call', name: 'exec_command', arguments: '{"cmd":"echo hi"}', call_id: 'c1' }),
      item({ type: 'function_call_output', call_id: 'c1', output: 'Output:\nhi\n' }),
      item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Final answer: done' }] }),
    ].join('\n');
    expect(shape(codex.sessionTurns(text))).toEqual([
      'user: first-task',
      'user: New messages in your Flotilla inbox (1).',
      'assistant: Running one command.',
      'assistant: call exec_command {"cmd":"echo hi"}',
      'tool: result exec_command {"type":"text","value":"Output:\\nhi\\n"}',
      'assistant: Final answer: done',
    ]);
    expect(codex.sessionId('rollout.jsonl', text)).toBe('01a21492-672a-7690-bcc6-f5fa67337a4a');
    expect(codex.sessionId('rollout.jsonl', item({ type: 'message' }))).toBeUndefined();
  });

  it('gemini: messages by id (a later line replaces one), tool calls with their results; its preamble and info lines left out', () => {
    const call = {
      id: 'k1',
      name: 'run_shell_command',
      args: { command: 'echo hi' },
      status: 'success',
      result: [{ functionResponse: { id: 'k1', name: 'run_shell_command', response: { output: 'Output: hi' } } }],
    };
    const text = [
      j({ sessionId: '9a50c1fe-8bbf-4a0b-8c4a-3ab9cab40850', kind: 'main' }),
      j({
        $set: {
          messages: [{ id: 'p0', type: 'user', content: [{ text: '<session_context>\nThis is the Gemini CLI.' }] }],
        },
      }),
      j({ id: 'i1', type: 'info', content: 'Waiting for MCP servers to initialize...' }),
      j({ id: 'u1', type: 'user', content: [{ text: 'first-task' }] }),
      j({ id: 'g1', type: 'gemini', content: 'Running one command.' }),
      j({ id: 'g1', type: 'gemini', content: 'Running one command.', toolCalls: [call] }),
      j({
        id: 'u2',
        type: 'user',
        content: [{ functionResponse: { id: 'k1', name: 'run_shell_command', response: { output: 'Output: hi' } } }],
      }),
      j({ id: 'g2', type: 'gemini', content: 'Final answer: done' }),
      j({ $set: { lastUpdated: '2026-01-01T00:00:02.000Z' } }),
    ].join('\n');
    expect(shape(gemini.sessionTurns(text))).toEqual([
      'user: first-task',
      'assistant: Running one command.',
      'assistant: call run_shell_command {"command":"echo hi"}',
      'tool: result run_shell_command {"type":"text","value":"Output: hi"}',
      'assistant: Final answer: done',
    ]);
    expect(gemini.sessionId('session-x.jsonl', text)).toBe('9a50c1fe-8bbf-4a0b-8c4a-3ab9cab40850');
  });
});
