import type { KeyInfo } from './keys.js';

/**
 * Raw terminal input → the dashboard's keys (pure). A read from a terminal in raw mode holds
 * one key, several (fast typing, `tmux send-keys jj`, a paste) or an escape sequence (arrows,
 * page up/down, delete). Plain text, Return included, stays together as one `input`, as
 * `reduceInput` takes it (`jj` moves two rows; `text⏎` sends the text); every other key is
 * its own event. A read that ends in ESC or inside a sequence is held: the caller flushes it
 * after a short pause, when a lone ESC is the Escape key.
 */

export interface KeyEvent {
  input: string;
  key: KeyInfo;
}

const ESC = '\u001B';

/** CSI / SS3 final characters and `~` codes that name keys; the rest decode as nothing. */
const FINALS: Record<string, KeyInfo> = { A: { upArrow: true }, B: { downArrow: true }, Z: { tab: true } };
const TILDES: Record<string, KeyInfo> = { '3': { delete: true }, '5': { pageUp: true }, '6': { pageDown: true } };

export class KeyDecoder {
  private pending = '';

  /** Keys in this chunk (with what was held from the last one). */
  push(chunk: string): KeyEvent[] {
    const text = this.pending + chunk;
    this.pending = '';
    const events: KeyEvent[] = [];
    let plain = '';
    const flushPlain = (): void => {
      if (plain) events.push(plainEvent(plain));
      plain = '';
    };
    let i = 0;
    while (i < text.length) {
      const ch = text[i]!;
      if (ch === ESC) {
        const seq = escapeSequence(text, i);
        if (seq === 'pending') {
          flushPlain();
          this.pending = text.slice(i);
          return events;
        }
        flushPlain();
        if (seq.event) events.push(seq.event);
        i = seq.end;
        continue;
      }
      const code = ch.charCodeAt(0);
      if (ch === '\r' || ch === '\n' || (code >= 0x20 && code !== 0x7f)) {
        plain += ch;
        i++;
        continue;
      }
      flushPlain();
      events.push(controlKey(ch));
      i++;
    }
    flushPlain();
    return events;
  }

  /** True while a read ended in ESC or a part of a sequence. */
  get holding(): boolean {
    return this.pending !== '';
  }

  /** After a pause with nothing more: a held ESC is the Escape key (and anything after it, meta). */
  flush(): KeyEvent[] {
    const held = this.pending;
    this.pending = '';
    if (held === '') return [];
    if (held === ESC) return [{ input: '', key: { escape: true } }];
    // An unfinished sequence (`ESC [`, `ESC ESC`): Escape, then whatever followed as keys.
    return [{ input: '', key: { escape: true } }, ...this.push(held.slice(1)), ...this.flush()];
  }
}

/** One run of text: a lone Return is the Return key; longer runs go to `reduceInput` whole. */
function plainEvent(text: string): KeyEvent {
  if (text === '\r' || text === '\n') return { input: '', key: { return: true } };
  return { input: text, key: {} };
}

/** A control character: Tab, Backspace (DEL or ^H), or ctrl + a letter. */
function controlKey(ch: string): KeyEvent {
  if (ch === '\t') return { input: '', key: { tab: true } };
  if (ch === '\u007F' || ch === '\b') return { input: '', key: { backspace: true } };
  const code = ch.charCodeAt(0);
  if (code >= 1 && code <= 26) return { input: String.fromCharCode(code + 96), key: { ctrl: true } };
  // NUL (ctrl-space, ctrl-@) and ^\ ^] ^^ ^_: keys this dashboard has no use for.
  return { input: '', key: { ctrl: true } };
}

type Parsed = 'pending' | { event: KeyEvent | null; end: number };

/** The key that starts with the ESC at `at`: a CSI or SS3 sequence, meta + a key, or Escape. */
function escapeSequence(text: string, at: number): Parsed {
  const next = text[at + 1];
  if (next === undefined) return 'pending';
  if (next === '[' || next === 'O') return controlSequence(text, at + 2, next === 'O');
  if (next === ESC) {
    // ESC ESC [ A: meta + arrow (some terminals' Alt); ESC ESC alone: Escape twice.
    const third = text[at + 2];
    if (third === undefined) return 'pending';
    if (third === '[' || third === 'O') {
      const inner = controlSequence(text, at + 3, third === 'O');
      if (inner === 'pending' || !inner.event) return inner;
      return { event: { input: inner.event.input, key: { ...inner.event.key, meta: true } }, end: inner.end };
    }
    return { event: { input: '', key: { escape: true } }, end: at + 1 };
  }
  // Alt + a key: ESC then the key's character.
  const cp = text.codePointAt(at + 1)!;
  const end = at + 1 + (cp > 0xffff ? 2 : 1);
  const ch = text.slice(at + 1, end);
  if (ch === '\r' || ch === '\n') return { event: { input: '', key: { return: true, meta: true } }, end };
  if (cp < 0x20 || cp === 0x7f) {
    const inner = controlKey(ch);
    return { event: { input: inner.input, key: { ...inner.key, meta: true } }, end };
  }
  return { event: { input: ch, key: { meta: true } }, end };
}

/** A CSI (`ESC [ params final`) or SS3 (`ESC O final`) sequence from `body`; unknown ones decode as nothing. */
function controlSequence(text: string, body: number, ss3: boolean): Parsed {
  let i = body;
  if (!ss3) {
    // Parameter and intermediate bytes, then one final byte; `ESC [ [ A` is the Linux console's F1.
    if (text[i] === '[') i++;
    while (i < text.length && /[\x20-\x3f]/.test(text[i]!)) i++;
  }
  const final = text[i];
  if (final === undefined) return 'pending';
  if (!/[\x40-\x7e]/.test(final)) return { event: null, end: i };
  const params = text.slice(body, i).split(';');
  const key = final === '~' ? TILDES[params[0] ?? ''] : FINALS[final];
  if (!key) return { event: null, end: i + 1 };
  // xterm modifiers: `ESC [ 1 ; 5 A` is ctrl + up (the second parameter is 1 + a bit mask: 1 shift, 2 alt, 4 ctrl).
  const mods = Math.max(0, Number(params[1] ?? '1') - 1) || 0;
  return {
    event: { input: '', key: { ...key, ...(mods & 4 ? { ctrl: true } : {}), ...(mods & 2 ? { meta: true } : {}) } },
    end: i + 1,
  };
}
