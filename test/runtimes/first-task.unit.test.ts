import { describe, expect, it } from 'vitest';
import { inputHolds } from '../../src/harness/cli-host/typist.js';
import { claude } from '../../src/runtimes/claude.js';
import { codex } from '../../src/runtimes/codex.js';
import { gemini } from '../../src/runtimes/gemini.js';

const CLAUDE_MARKS = claude.inputPrompt!;
const CODEX_MARKS = codex.inputPrompt!;
const GEMINI_MARKS = gemini.inputPrompt!;

// Claude Code 2.1's pane as captured while its first task was typed, and once it took it.
const RULE = '─'.repeat(40);
const typed = ['', '❯ get ready now please', RULE, "  ⏵⏵ don't ask on"].join('\n');
const taken = ['❯ get ready now please', '', '✢ Topsy-turvying…', '', RULE, '❯ ', RULE, "  ⏵⏵ don't ask on"].join('\n');
const longPaste = ['❯ earlier task', '', RULE, '❯ [Pasted text #1 +12 lines]', RULE].join('\n');

// Gemini CLI 0.61 and Codex 0.169, captured in approvals.test.ts: the refusal typed after a timeout, and taken.
const GEMINI_FOOT = [' workspace (/directory)     sandbox     /model', ' /tmp/p     no sandbox     gemini-2.5-flash'];
const geminiTyped = [' > make the marker', 'ℹ Request cancelled.', RULE, ' Shift+Tab to accept edits']
  .concat([' > The fleet refused that call: nobody answered within 8s', '   (agents.approval_timeout_secs)'])
  .concat(GEMINI_FOOT)
  .join('\n');
const geminiTaken = [' > make the marker', ' > The fleet refused that call: nobody', RULE, ' >   Type your message']
  .concat(GEMINI_FOOT)
  .join('\n');
/** Gemini asking right after it took the text: no input line below, its own question instead. */
const geminiAsks = [' > make the marker', '╭──╮', '│ ? Shell  touch marker │']
  .concat(['│ Allow execution of [Shell]? │', '│ ● 1. Allow once │', '│   2. Allow for this session │'])
  .concat(['│   3. No, suggest changes (esc) │', '╰──╯', '⚠  Warning: True color', '   color enabled'])
  .join('\n');
/** Gemini in yolo mode (dont_ask) marks its input line ` * `; the ` > ` above is the message it took. */
const geminiYoloTaken = [' > You have 1 new message', '⠹ Thinking… (esc to cancel, 2s)', RULE, ' YOLO Ctrl+Y']
  .concat([' *   Type your message or @path/to/file'])
  .concat(GEMINI_FOOT)
  .join('\n');
const geminiYoloTyped = [' > make the marker', RULE, ' YOLO Ctrl+Y', ' * You have 1 new message']
  .concat(GEMINI_FOOT)
  .join('\n');
const codexTaken = ['› make the marker', '• Creating the marker.', '› Ask Codex to do anything', '  fake-model default']
  .concat(['  ← for agents · ? for shortcuts'])
  .join('\n');

/** Enter is pressed again only while the CLI's input line still holds what was typed (§13). */
describe('whether the input line still holds the first task', () => {
  it('says yes while the task sits in the input box', () => {
    expect(inputHolds(typed, CLAUDE_MARKS, 'get ready now please')).toBe(true);
  });
  it('says no once the CLI took it, though the conversation shows it above', () => {
    expect(inputHolds(taken, CLAUDE_MARKS, 'get ready now please')).toBe(false);
  });
  it("takes the CLI's placeholder for a long paste", () => {
    expect(inputHolds(longPaste, CLAUDE_MARKS, 'line one\nline two')).toBe(true);
  });
  it("reads Gemini's and Codex's input lines by their own marks", () => {
    expect(inputHolds(geminiTyped, GEMINI_MARKS, 'The fleet refused that call: nobody answered')).toBe(true);
    expect(inputHolds(geminiTaken, GEMINI_MARKS, 'The fleet refused that call: nobody answered')).toBe(false);
    expect(inputHolds(codexTaken, CODEX_MARKS, 'make the marker')).toBe(false);
  });
  it("reads Gemini's yolo input line by its own mark, not the message it took above it", () => {
    expect(inputHolds(geminiYoloTaken, GEMINI_MARKS, 'You have 1 new message')).toBe(false);
    expect(inputHolds(geminiYoloTyped, GEMINI_MARKS, 'You have 1 new message')).toBe(true);
  });
  it('says no when the last marked line is the conversation, far above a question the CLI shows', () => {
    expect(inputHolds(geminiAsks, GEMINI_MARKS, 'make the marker')).toBe(false);
  });
  it('says no when the pane shows no input line at all', () => {
    expect(inputHolds('Loading…', CLAUDE_MARKS, 'get ready')).toBe(false);
  });
});
