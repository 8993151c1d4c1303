import { describe, expect, it } from 'vitest';
import { newlineAdded } from '../../src/harness/cli-host/typist.js';
import { gemini } from '../../src/runtimes/gemini.js';

const MARKS = gemini.inputPrompt!;
const RULE = '─'.repeat(80);
const FOOT = [' workspace (/directory)     sandbox     /model', ' /tmp/p     no sandbox     gemini-2.5-flash', '', ''];
const NOTICE = ' * [flotilla] 1 new inbox message — they are attached below as data.';
const above = [' > get ready', '', '✦ Ready and idle.', '', RULE, ' YOLO Ctrl+Y              1 MCP server', ''];

// Gemini CLI 0.61's pane (yolo mode, as dont_ask runs it) with the notice in its input box, and
// after an Enter it took as a newline, as captured: a blank row more below the text.
const typed = [...above, NOTICE, '', ...FOOT].join('\n');
const newline = [...above, NOTICE, '', '', ...FOOT].join('\n');

/** The typist undoes an Enter the CLI took as a newline, and only such an Enter (harness/cli-host/typist.ts). */
describe('whether an Enter landed as a newline in the input box', () => {
  it('says yes when the box grew a blank row below the text and nothing else changed', () => {
    expect(newlineAdded(typed, newline, MARKS)).toBe(true);
  });

  it('says yes below the last row of a text wrapped over rows', () => {
    const wrapped = [NOTICE, '   and the rest of a long text wrapped onto a row of its own'];
    expect(
      newlineAdded(
        [...above, ...wrapped, '', ...FOOT].join('\n'),
        [...above, ...wrapped, '', '', ...FOOT].join('\n'),
        MARKS,
      ),
    ).toBe(true);
  });

  it('says no when the screen changed above the input line (a hook line redrawn, "Request cancelled")', () => {
    const cancelled = [...above.slice(0, 3), 'ℹ Request cancelled.', ...above.slice(3), NOTICE, '', ...FOOT];
    expect(newlineAdded(typed, cancelled.join('\n'), MARKS)).toBe(false);
  });

  it('says no when the rows below changed too (the footer redrawn with other words)', () => {
    const other = [...above, NOTICE, '', '', ' workspace (/directory)', ' /tmp/p  sandbox-exec', '', ''].join('\n');
    expect(newlineAdded(typed, other, MARKS)).toBe(false);
  });

  it('says no when the text left the input box (taken)', () => {
    const taken = [...above, ' > [flotilla] 1 new inbox message', '⠋ Thinking…', ' *   Type your message', '', ...FOOT];
    expect(newlineAdded(typed, taken.join('\n'), MARKS)).toBe(false);
  });
});
