import { describe, expect, it } from 'vitest';
import { geminiQuestion } from '../../src/runtimes/gemini.js';

/**
 * What a Gemini confirmation asks about, from its Notification hook (Gemini 0.61's payload
 * shapes, as the CLI wrote them in test/runtimes/approvals.test.ts): the queue shows the
 * command, the file or the fleet tool a person is asked about.
 */
describe('geminiQuestion', () => {
  const ask = (details: Record<string, unknown>) =>
    geminiQuestion({
      hook_event_name: 'Notification',
      notification_type: 'ToolPermission',
      message: 'Tool … requires …',
      details,
    });

  it('a shell confirmation is the shell tool with its command', () => {
    expect(
      ask({ type: 'exec', title: 'Confirm Shell Command', command: 'touch approve-marker', rootCommand: 'touch' }),
    ).toEqual({ tool: 'shell', command: 'touch approve-marker', input: { command: 'touch approve-marker' } });
  });

  it('an edit confirmation names the file; an MCP one the fleet tool', () => {
    expect(ask({ type: 'edit', title: 'Confirm Edit', fileName: 'a.ts', filePath: '/p/a.ts' })).toEqual({
      tool: 'edit',
      input: { path: '/p/a.ts' },
    });
    expect(
      ask({ type: 'mcp', title: 'Confirm MCP Tool', serverName: 'flotilla', toolName: 'send_message' }),
    ).toMatchObject({ tool: 'send_message' });
  });

  it('any other notification is no question', () => {
    expect(
      geminiQuestion({ hook_event_name: 'Notification', notification_type: 'Other', message: 'hi' }),
    ).toBeUndefined();
  });
});
