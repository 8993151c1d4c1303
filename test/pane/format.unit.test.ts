import { describe, expect, it } from 'vitest';
import { colorEnabled, displayWidth, makeStyle, sanitize } from '../../src/harness/pane/ansi.js';
import {
  formatApprovalQuestion,
  formatEvent,
  type FormatContext,
  type PaneOutput,
} from '../../src/harness/pane/format-event.js';
import { parseInboxWrappers } from '../../src/harness/pane/format-inbox.js';
import {
  formatBanner,
  formatStatusLine,
  type PaneHeader,
  type StatusFacts,
} from '../../src/harness/pane/format-status.js';
import type { SessionEvent } from '../../src/harness/session-types.js';
import type { ToolCall } from '../../src/tools/types.js';

const plain = makeStyle(false);
const color = makeStyle(true);
const ctx: FormatContext = { style: plain, width: 80 };
const lines = (outs: PaneOutput[]) => outs.filter((o) => o.kind === 'line').map((o) => (o as { text: string }).text);
const call = (name: string, input: unknown): ToolCall => ({ id: 'c1', name, input });
const result = (
  c: ToolCall,
  output: string,
  extra: { isError?: boolean; meta?: Record<string, unknown> } = {},
): SessionEvent => ({ type: 'tool_result', call: c, result: { output, ...extra }, durationMs: 5 });

const header: PaneHeader = {
  id: 'worker-ab12cd',
  name: 'worker',
  depth: 1,
  maxDepth: 3,
  model: 'script:demo.yaml',
  scripted: true,
  parentId: 'lead-3kd9p1',
};
const facts: StatusFacts = {
  status: 'working',
  turns: 4,
  taskTurns: 4,
  maxTurns: 20,
  runtime: 'flotilla',
  usage: { inputTokens: 10_000, outputTokens: 2_345, costUsd: null },
};

describe('tool lines', () => {
  it('shell: `$ command`, then the first 5 output lines dimmed and a count of the rest', () => {
    const c = call('shell', { command: 'git status' });
    expect(lines(formatEvent({ type: 'tool_call', call: c }, ctx))).toEqual(['$ git status']);
    const out = Array.from({ length: 8 }, (_, i) => `line ${i + 1}`).join('\n') + '\n[exit code 0]';
    expect(lines(formatEvent(result(c, out), ctx))).toEqual([
      '  line 1',
      '  line 2',
      '  line 3',
      '  line 4',
      '  line 5',
      '  … (3 more lines)',
    ]);
    const dimmed = lines(formatEvent(result(c, out), { style: color, width: 80 }));
    expect(dimmed[0]).toBe('\x1b[2m  line 1\x1b[22m');
  });

  it('shell: a short output has no "more" line; a failing exit code shows in red', () => {
    const c = call('shell', { command: 'npm test' });
    expect(lines(formatEvent(result(c, 'ok\n[exit code 0]'), ctx))).toEqual(['  ok']);
    expect(lines(formatEvent(result(c, '(no output)\n[exit code 0]'), ctx))).toEqual([]);
    const failed = lines(formatEvent(result(c, 'FAIL x\n[exit code 1]'), { style: color, width: 80 }));
    expect(failed).toEqual(['\x1b[2m  FAIL x\x1b[22m', '\x1b[31m  [exit code 1]\x1b[39m']);
  });

  it('shell: a multi-line command shows its first line; long lines are cut to the pane width', () => {
    expect(lines(formatEvent({ type: 'tool_call', call: call('shell', { command: 'cd x\nmake' }) }, ctx))).toEqual([
      '$ cd x …',
    ]);
    const c = call('shell', { command: 'cat big' });
    const [first] = lines(formatEvent(result(c, 'y'.repeat(200)), { style: plain, width: 40 }));
    expect(first).toBe('  ' + 'y'.repeat(36) + '…');
  });

  it('file and fleet tools get one compact line', () => {
    const one = (name: string, input: unknown) =>
      lines(formatEvent({ type: 'tool_call', call: call(name, input) }, ctx));
    expect(one('read', { path: 'src/x.ts' })).toEqual(['read src/x.ts']);
    expect(one('write', { path: 'src/x.ts', content: 'a'.repeat(1229) })).toEqual(['write src/x.ts (1.2 KB)']);
    expect(one('edit', { path: 'src/x.ts', old: 'a', new: 'b' })).toEqual(['edit src/x.ts']);
    expect(one('send_message', { to: 'lead-3kd9p1', body: 'hi' })).toEqual(['send_message → lead-3kd9p1']);
    expect(one('spawn_agent', { prompt: 'go' })).toEqual([]);
    expect(one('list_agents', {})).toEqual(['list_agents']);
  });

  it('spawn_agent shows the new id from its result', () => {
    const c = call('spawn_agent', { prompt: 'go', agent: 'worker' });
    expect(lines(formatEvent(result(c, 'Spawned worker-ab12cd in window @3.'), ctx))).toEqual([
      'spawn_agent → worker-ab12cd',
    ]);
    expect(lines(formatEvent(result(c, 'ok', { meta: { id: 'worker-zz9999' } }), ctx))).toEqual([
      'spawn_agent → worker-zz9999',
    ]);
    // The tool's own `child` key wins over an id-shaped word in the answer (wait: true).
    expect(
      lines(formatEvent(result(c, '## kid: completed\nEcho: report to boss-785x8g', { meta: { child: 'kid' } }), ctx)),
    ).toEqual(['spawn_agent → kid']);
  });

  it('tool errors are one red line', () => {
    const c = call('edit', { path: 'a.ts' });
    const out = lines(
      formatEvent(result(c, 'File not found: a.ts. To create a file use write.\nmore', { isError: true }), {
        style: color,
        width: 80,
      }),
    );
    expect(out).toEqual(['\x1b[31m✗ edit: File not found: a.ts. To create a file use write.\x1b[39m']);
  });
});

describe('inbox notices', () => {
  const surfaced = (text: string, source: 'inbox' | 'human' = 'inbox'): SessionEvent => ({
    type: 'message_surfaced',
    injection: { source, text },
    message: { role: 'user', content: text },
  });

  it('one line per wrapped message, from its attributes', () => {
    const text =
      'Messages:\n<inbox-message id="01J1" from="worker-ab12cd" kind="completion" priority="normal" summary="Found 3 TODOs">\nbody\n</inbox-message>\n' +
      '<inbox-message id=01J2 from=lead-3kd9p1 kind=message priority=urgent>\nStop now, the build is red.\nmore\n</inbox-message>';
    expect(lines(formatEvent(surfaced(text), ctx))).toEqual([
      '✉ from worker-ab12cd (completion): Found 3 TODOs',
      '✉ [urgent] from lead-3kd9p1 (message): Stop now, the build is red.',
    ]);
    expect(parseInboxWrappers(text)[1]).toEqual({
      id: '01J2',
      from: 'lead-3kd9p1',
      kind: 'message',
      priority: 'urgent',
      summary: 'Stop now, the build is red.',
    });
  });

  it('a human injection is not echoed again', () => {
    expect(formatEvent(surfaced('please stop', 'human'), ctx)).toEqual([]);
  });
});

describe('other events', () => {
  it('text streams as text; model escape codes are removed', () => {
    expect(formatEvent({ type: 'text_delta', text: 'hi \x1b[2Jthere\r\n' }, ctx)).toEqual([
      { kind: 'text', text: 'hi there\n' },
    ]);
    expect(sanitize('a\tb\x07')).toBe('a    b');
  });

  it('notices by level, task start and end', () => {
    expect(lines(formatEvent({ type: 'notice', text: 'child done', level: 'warn' }, ctx))).toEqual(['! child done']);
    expect(lines(formatEvent({ type: 'notice', text: 'x' }, ctx))).toEqual(['• x']);
    expect(lines(formatEvent({ type: 'task_start', task: 2, prompt: 'fix it' }, ctx))).toEqual(['▸ task 2: fix it']);
    expect(
      lines(formatEvent({ type: 'task_start', task: 2, prompt: 'fix it' }, { ...ctx, lastHumanLine: 'fix it' })),
    ).toEqual(['▸ task 2']);
    const end = (status: 'completed' | 'failed', exitReason: string | null): SessionEvent => ({
      type: 'task_end',
      text: '',
      result: { task: 1, status, exitReason, finishedAt: '', outputPath: null },
    });
    expect(lines(formatEvent(end('completed', null), ctx))).toEqual(['✓ task 1 completed']);
    expect(lines(formatEvent(end('failed', 'rate limited'), ctx))).toEqual(['✗ task 1 failed: rate limited']);
  });

  it('the approval question names the tool and the call', () => {
    const q = formatApprovalQuestion(
      { id: 'r1', agentId: 'a', tool: 'shell', summary: '$ rm -rf build', createdAt: '' },
      plain,
      80,
    );
    expect(q).toBe('Allow shell: $ rm -rf build ?');
  });
});

describe('status line and banner', () => {
  it('shows id, state, depth, turns, tokens, model and the scripted marker', () => {
    expect(formatStatusLine(header, facts, plain, 120)).toBe(
      'worker-ab12cd · working · depth 1/3 · turn 4/20 · 12.3k tok · script:demo.yaml [scripted model]',
    );
    expect(formatStatusLine({ ...header, scripted: false, model: 'anthropic:claude-x' }, facts, plain, 120)).toBe(
      'worker-ab12cd · working · depth 1/3 · turn 4/20 · 12.3k tok · anthropic:claude-x',
    );
  });

  it("counts the current task's turns against max_turns, which is per task: a persistent agent's 13th turn in its third task is turn 3/10", () => {
    const line = formatStatusLine(header, { ...facts, turns: 13, taskTurns: 3, maxTurns: 10 }, plain, 120);
    expect(line).toContain(' · turn 3/10 · ');
    // A vendor CLI takes no turn limit from Flotilla: its own count, with no limit beside it.
    expect(formatStatusLine(header, { ...facts, turns: 13, taskTurns: 0, runtime: 'codex' }, plain, 120)).toContain(
      ' · turn 13 · ',
    );
  });

  it('never wraps, and keeps the scripted marker when it must cut', () => {
    for (const width of [80, 60, 40]) {
      const line = formatStatusLine(
        { ...header, id: 'a-very-long-agent-name-for-testing-ab12cd' },
        facts,
        plain,
        width,
      );
      expect(displayWidth(line)).toBeLessThan(width);
      expect(line.endsWith('[scripted model]')).toBe(true);
    }
    const colored = formatStatusLine(header, facts, color, 120);
    expect(colored).toContain('\x1b[32mworking\x1b[39m');
    expect(displayWidth(colored)).toBe(displayWidth(formatStatusLine(header, facts, plain, 120)));
  });

  it('the banner says who the agent is and marks the scripted model', () => {
    const [first, second] = formatBanner(header, plain, 80);
    expect(first).toBe('flotilla · worker-ab12cd (worker) · depth 1/3 · parent lead-3kd9p1');
    expect(second).toBe('model script:demo.yaml [scripted model]');
  });
});

describe('color switch', () => {
  it('on for a TTY, off when NO_COLOR is set or the output is not a TTY', () => {
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
    expect(colorEnabled({}, {})).toBe(false);
    expect(plain.red('x')).toBe('x');
  });
});
