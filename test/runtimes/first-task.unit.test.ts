import { describe, expect, it } from 'vitest';
import { inputHolds } from '../../src/harness/cli-host/cli-tend.js';

// Claude Code 2.1's pane as captured while its first task was typed, and once it took it.
const RULE = '─'.repeat(40);
const typed = ['', '❯ get ready now please', RULE, "  ⏵⏵ don't ask on"].join('\n');
const taken = ['❯ get ready now please', '', '✢ Topsy-turvying…', '', RULE, '❯ ', RULE, "  ⏵⏵ don't ask on"].join('\n');
const longPaste = ['❯ earlier task', '', RULE, '❯ [Pasted text #1 +12 lines]', RULE].join('\n');

/** The first task is typed again (Enter) only while the CLI's input line still holds it (§13). */
describe('whether the input line still holds the first task', () => {
  it('says yes while the task sits in the input box', () => {
    expect(inputHolds(typed, '❯', 'get ready now please')).toBe(true);
  });
  it('says no once the CLI took it, though the conversation shows it above', () => {
    expect(inputHolds(taken, '❯', 'get ready now please')).toBe(false);
  });
  it("takes the CLI's placeholder for a long paste", () => {
    expect(inputHolds(longPaste, '❯', 'line one\nline two')).toBe(true);
  });
  it('says no when the pane shows no input line at all', () => {
    expect(inputHolds('Loading…', '❯', 'get ready')).toBe(false);
  });
});
