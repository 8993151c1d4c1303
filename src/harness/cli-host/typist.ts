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
 * Text a CLI that types its notice (TypedCli.typesNotice) gets as keys: one short line of words and plain punctuation
 * (dashes too), none of the marks that open a CLI's menus (`/`, `@`, `!`, `?`, a backslash), no control character,
 * no `;` (an argument of tmux's that ends in one ends its command). A longer text is pasted: a key event a character
 * is the CLI's work.
 */
const PLAIN_LINE = /^[\p{L}\p{N} [\]().,:'"\u2013\u2014-]{1,200}$/u;

/** What paneTypist needs to know of the CLI (its Runtime's fields). */
interface TypedCli {
  /** How long after the pane shows a paste the CLI still takes Enter as a newline (Runtime.pasteGuardMs). */
  guardMs?: number;
  /** One line of plain words is typed as keys, not pasted, unless the screen shows this (Runtime.typesNotice). */
  typesNotice?: { unlessShown: string };
  /** The marks that start the CLI's input line (Runtime.inputPrompt). */
  inputPrompt?: readonly string[];
  /** What the pane shows while the CLI asks a question of its own (Runtime.paneQuestion.shows). */
  question?: string;
}

/**
 * Types into a vendor CLI's pane as a person would: the text as one bracketed paste (a short plain
 * line as keys, for a CLI that types its notice), then Enter on its own once the pane shows the
 * text and the CLI's paste guard has passed, pressed again while the screen shows it was not taken.
 */
export async function paneTypist(
  place: { socket: string | null; paneId: string },
  configDir: string,
  cli: TypedCli = {},
): Promise<Typist> {
  const { Tmux } = await import('../../tmux/client.js');
  const tmux = new Tmux({ socket: place.socket });
  const buffer = `flotilla-${place.paneId.replace(/\W/g, '')}`;
  // The screen, and in the same tmux call (one command queue in the server: nothing comes between them) what follows
  // it: one process where there were two or three, each ~4 ms of the time from mail seen to Enter pressed.
  const captureThen = (...then: string[][]) =>
    tmux.run(['capture-pane', '-p', '-J', '-t', place.paneId, ...then.flatMap((cmd) => [';', ...cmd])]);
  const pane: Pane = {
    capture: () => captureThen(),
    keys: (...keys) => tmux.exec(['send-keys', '-t', place.paneId, ...keys]).then(() => undefined),
    captureThenKeys: (...keys) => captureThen(['send-keys', '-t', place.paneId, ...keys]),
  };
  const shown = async (text: string) => pastesShown(text, await pane.capture().catch(() => ''));
  return {
    async submit(text) {
      // The screen before the text (an earlier notice still on it counts before and after alike), then the text: read
      // first for a CLI that may type it (what it shows says whether keys are text), else in the call that pastes.
      const typing = cli.typesNotice && PLAIN_LINE.test(text) ? cli.typesNotice : null;
      const first = typing ? await pane.capture().catch(() => null) : undefined;
      let before: number;
      if (typing && first && !first.includes(typing.unlessShown)) {
        before = pastesShown(text, first);
        await pane.keys('-l', '--', text);
      } else {
        const file = join(configDir, 'paste.txt');
        writeFileSync(file, text, { mode: 0o600 });
        const paste = [
          ['load-buffer', '-b', buffer, file],
          ['paste-buffer', '-p', '-d', '-b', buffer, '-t', place.paneId],
        ];
        before = pastesShown(text, await captureThen(...paste).catch(() => ''));
      }
      traceMark('shim: pasted');
      const end = Date.now() + PASTE_SHOWN_MAX_MS;
      while (Date.now() < end && (await shown(text)) <= before) await sleep(10);
      traceMark('shim: paste shown');
      // The CLI's guard runs from the moment it read the paste, which is before it drew it.
      if (cli.guardMs) await sleep(cli.guardMs);
      await pressEnter(pane, text, cli);
    },
    async key(name) {
      await pane.keys(name);
    },
    screen: () => pane.capture(),
  };
}

/** The CLI's pane: its screen, and keys pressed in it. */
interface Pane {
  capture(): Promise<string>;
  keys(...names: string[]): Promise<void>;
  /** The screen, then the keys pressed, in one tmux call: the screen the keys were pressed on. */
  captureThenKeys(...names: string[]): Promise<string>;
}

/** How long an unchanged screen means the Enter was lost (pressed again). */
const LOST_MS = 3_000;
/** How long an input line may go on holding the text after the screen changed before Enter is pressed again. */
const HELD_MS = 1_000;
/** How long after its first Enter a newline the CLI took it as is undone and Enter pressed again at once. */
const UNDO_MS = 5_000;

/**
 * Enter for `text` in the input line, until the CLI took it. On a busy machine the CLI can still
 * be taking the paste in when Enter arrives, and the Enter is lost: the text then sits in the
 * input box and nothing happens. An Enter that was taken changes the screen and empties the
 * input line; one that left the screen as it was is pressed again. One the CLI took as a newline
 * (Gemini's paste guard outlasted the wait: its input box grew a blank row and still holds the
 * text) is undone with Backspace and, once the pane shows that, pressed again — one key at a time,
 * each drawn before the next, so a taken Enter is never followed by another into a stale box. One
 * that left the text there while the screen changed for a reason of its own (Gemini drawing
 * "Request cancelled" late) is pressed again once the line held it for HELD_MS. Never into a
 * question the CLI shows.
 */
async function pressEnter(pane: Pane, text: string, cli: TypedCli): Promise<void> {
  const undoUntil = Date.now() + UNDO_MS;
  // A pane gone takes no Enter: tmux stops the call at the capture that failed.
  let screen: string | null = await pane.captureThenKeys('Enter').catch(() => null);
  let presses = 0;
  while (screen !== null) {
    traceMark('shim: Enter pressed');
    const did = await afterEnter(pane, screen, text, cli, Date.now() < undoUntil);
    if (did.took) return;
    screen = did.screen;
    if (!did.newline) {
      if (++presses === 3) return;
    } else {
      await pane.keys('BSpace');
      traceMark('shim: newline undone');
      const undone = await changeOf(pane, did.screen, LOST_MS);
      if (undone === null) return;
      screen = undone ?? did.screen;
      if (cli.question && screen.includes(cli.question)) return;
      if (cli.inputPrompt && !inputHolds(screen, cli.inputPrompt, text)) return;
    }
    await pane.keys('Enter');
  }
}

/**
 * What an Enter did, from the screen it was pressed on: `took` once the input line lets the text
 * go (or the pane is gone, or the CLI asks a question); else the screen now, and whether the Enter
 * was taken as a newline (told only while `undoable`): a newline, an unchanged screen for
 * LOST_MS, or the text still held HELD_MS after the screen first changed are pressed again.
 */
async function afterEnter(
  pane: Pane,
  from: string,
  text: string,
  cli: TypedCli,
  undoable: boolean,
): Promise<{ took: true } | { took: false; newline: boolean; screen: string }> {
  let screen = from;
  let until = Date.now() + LOST_MS;
  let changed = false;
  for (;;) {
    const now = await changeOf(pane, screen, until - Date.now());
    if (now === null) return { took: true };
    if (now === undefined) return { took: false, newline: false, screen };
    if (!cli.inputPrompt || (cli.question && now.includes(cli.question))) return { took: true };
    if (!inputHolds(now, cli.inputPrompt, text)) return { took: true };
    if (undoable && newlineAdded(screen, now, cli.inputPrompt)) return { took: false, newline: true, screen: now };
    if (!changed) until = Date.now() + HELD_MS;
    changed = true;
    screen = now;
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

/** How often the screen is read after a key, while the CLI's answer to it is soon; later, how often. */
const SOON_POLL_MS = 15;
const LATE_POLL_MS = 200;
const SOON_MS = 600;

/** The screen once it differs from `from` within `ms`; undefined if it does not, null once the pane is gone. */
async function changeOf(pane: Pane, from: string, ms: number): Promise<string | null | undefined> {
  const start = Date.now();
  while (Date.now() - start < ms) {
    // A pane gone (its window closed) takes no more keys.
    const now = await pane.capture().catch(() => null);
    if (now !== from) return now;
    await sleep(Date.now() - start < SOON_MS ? SOON_POLL_MS : LATE_POLL_MS);
  }
  return undefined;
}

/**
 * Whether `after` shows the input line as in `before` with one blank row added below the text:
 * an Enter the CLI took as a newline (the cursor on a row of its own). The rows below the input
 * line are compared: the first that differs is blank now and was not, and the rest is as it was.
 */
export function newlineAdded(before: string, after: string, inputPrompt: readonly string[]): boolean {
  const rowsBelow = (screen: string) => {
    const lines = screen.split('\n').map((l) => l.trimEnd());
    const at = lines.findLastIndex((l) => inputPrompt.some((mark) => l.includes(mark)));
    return at === -1 ? null : lines.slice(at + 1);
  };
  const was = rowsBelow(before);
  const now = rowsBelow(after);
  if (!was || !now) return false;
  const k = now.findIndex((l, i) => l !== was[i]);
  if (k === -1 || now[k]!.trim() !== '' || !was[k]?.trim()) return false;
  const filled = (rows: string[]) => rows.filter((l) => l.trim() !== '').join('\n');
  return filled(now.slice(k)) === filled(was.slice(k));
}
