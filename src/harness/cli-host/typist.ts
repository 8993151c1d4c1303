import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from '../../sleep.js';
import { traceMark } from '../../trace.js';
import type { Typist } from './idle.js';

/**
 * Enter follows a paste once the pane shows it, or after this long: a paste and its Enter in
 * one read can land as a newline in the input box, so Enter waits until the CLI has read (and
 * drawn) the paste — a few ms on a quiet machine, never more than the fixed pause it replaces.
 */
export const PASTE_SHOWN_MAX_MS = 300;

/**
 * How many times `screen` shows a paste of `text`: its first line's start as typed, or the
 * CLI's own placeholder for a long paste (Claude's "[Pasted text #1 +12 lines]", Gemini's and
 * Codex's alike). The count grows by one when the CLI draws the paste in its input box; an
 * earlier notice still on the screen counts before and after alike.
 */
export function pastesShown(text: string, screen: string): number {
  const head = text.trim().split('\n')[0]!.slice(0, 24);
  return occurrences(screen, head) + occurrences(screen.toLowerCase(), '[pasted');
}

function occurrences(haystack: string, needle: string): number {
  if (!needle) return 0;
  let n = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) n++;
  return n;
}

/**
 * Types into a vendor CLI's pane as a person would: the text as one bracketed paste, then Enter
 * on its own once the pane shows the paste, pressed again while the screen shows it was not taken.
 */
export async function paneTypist(
  place: { socket: string | null; paneId: string },
  configDir: string,
  cli: {
    /** At least this long between a paste and its Enter (Runtime.pasteGuardMs). */
    guardMs?: number;
    /** The marks that start the CLI's input line (Runtime.inputPrompt). */
    inputPrompt?: readonly string[];
    /** What the pane shows while the CLI asks a question of its own (Runtime.paneQuestion.shows). */
    question?: string;
  } = {},
): Promise<Typist> {
  const guardMs = cli.guardMs ?? 0;
  const { Tmux } = await import('../../tmux/client.js');
  const tmux = new Tmux({ socket: place.socket });
  const buffer = `flotilla-${place.paneId.replace(/\W/g, '')}`;
  const shown = async (text: string) => pastesShown(text, await tmux.capturePane(place.paneId).catch(() => ''));
  return {
    async submit(text) {
      const before = await shown(text);
      const file = join(configDir, 'paste.txt');
      writeFileSync(file, text, { mode: 0o600 });
      await tmux.exec(['load-buffer', '-b', buffer, file]);
      await tmux.exec(['paste-buffer', '-p', '-d', '-b', buffer, '-t', place.paneId]);
      traceMark('shim: pasted');
      const pasted = Date.now();
      const end = pasted + Math.max(PASTE_SHOWN_MAX_MS, guardMs);
      while (Date.now() < end && (await shown(text)) <= before) await sleep(10);
      if (Date.now() < pasted + guardMs) await sleep(pasted + guardMs - Date.now());
      // On a busy machine the CLI can still be taking the paste in when Enter arrives, and the
      // Enter is lost: the text then sits in the input box and nothing happens. An Enter that was
      // taken changes the screen and empties the input line; one that left the screen as it was,
      // or the text on the input line (the screen changed for a reason of its own: Gemini drawing
      // "Request cancelled" late), is pressed again — never into a question the CLI shows.
      const capture = () => tmux.capturePane(place.paneId);
      for (let press = 0; press < 3; press++) {
        const pasted = await capture().catch(() => null);
        if (pasted === null) return;
        await tmux.exec(['send-keys', '-t', place.paneId, 'Enter']);
        traceMark('shim: Enter pressed');
        if (!(await screenChanges(capture, pasted, 3_000))) continue;
        if (!cli.inputPrompt || !(await stillHeld(capture, cli.inputPrompt, text, cli.question))) return;
      }
    },
    async key(name) {
      await tmux.exec(['send-keys', '-t', place.paneId, name]);
    },
    screen: () => tmux.capturePane(place.paneId),
  };
}

/** How long an input line may go on holding the text after the screen changed before Enter is pressed again. */
const HELD_MS = 1_000;

/**
 * Whether the input line still holds `text` for `HELD_MS` after an Enter changed the screen;
 * no once it lets go, or once the CLI shows a question of its own (an Enter there answers it).
 */
async function stillHeld(
  screen: () => Promise<string>,
  inputPrompt: readonly string[],
  text: string,
  question: string | undefined,
): Promise<boolean> {
  const end = Date.now() + HELD_MS;
  for (;;) {
    const now = await screen().catch(() => null);
    if (now === null || (question && now.includes(question)) || !inputHolds(now, inputPrompt, text)) return false;
    if (Date.now() >= end) return true;
    await sleep(100);
  }
}

/** Lines an input line may have below it: its own wrapped rest, the box's border, the CLI's footer. */
const BELOW_INPUT_LINES = 8;

/**
 * Whether the CLI's input line shows `text` (or its placeholder for a long paste): the last line
 * one of its marks starts, at the foot of the screen below the conversation, where the CLI also
 * marks the messages it took. Far above the foot it is the conversation's (a question drawn below).
 */
export function inputHolds(screen: string, inputPrompt: readonly string[], text: string): boolean {
  const lines = screen.split('\n');
  const at = lines.findLastIndex((l) => inputPrompt.some((mark) => l.includes(mark)));
  if (at === -1) return false;
  if (lines.slice(at + 1).filter((l) => l.trim() !== '').length > BELOW_INPUT_LINES) return false;
  const line = lines[at]!;
  const head = text.split('\n')[0]!.trim().slice(0, 24);
  return (head !== '' && line.includes(head)) || line.toLowerCase().includes('[pasted');
}

/** Whether the screen differs from `from` within `ms`. */
async function screenChanges(screen: () => Promise<string>, from: string, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // A pane gone (its window closed) takes no more keys.
    if ((await screen().catch(() => null)) !== from) return true;
    await sleep(200);
  }
  return false;
}
