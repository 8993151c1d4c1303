import { describe, expect, it } from 'vitest';
import { KeyDecoder, type KeyEvent } from '../../src/watch/key-decoder.js';
import { initialUi, reduceInput, type Effect, type UiState } from '../../src/watch/keys.js';
import type { Snapshot, WatchRow } from '../../src/watch/rows.js';

const decode = (...chunks: string[]): KeyEvent[] => {
  const d = new KeyDecoder();
  return chunks.flatMap((c) => d.push(c));
};

describe('KeyDecoder', () => {
  it('names the keys the dashboard uses', () => {
    expect(decode('\u001B[A')).toEqual([{ input: '', key: { upArrow: true } }]);
    expect(decode('\u001B[B')).toEqual([{ input: '', key: { downArrow: true } }]);
    // Application cursor mode (SS3), as some terminals send arrows.
    expect(decode('\u001BOA')).toEqual([{ input: '', key: { upArrow: true } }]);
    expect(decode('\u001B[5~')).toEqual([{ input: '', key: { pageUp: true } }]);
    expect(decode('\u001B[6~')).toEqual([{ input: '', key: { pageDown: true } }]);
    expect(decode('\u001B[3~')).toEqual([{ input: '', key: { delete: true } }]);
    expect(decode('\r')).toEqual([{ input: '', key: { return: true } }]);
    expect(decode('\n')).toEqual([{ input: '', key: { return: true } }]);
    expect(decode('\t')).toEqual([{ input: '', key: { tab: true } }]);
    expect(decode('\u001B[Z')).toEqual([{ input: '', key: { tab: true } }]);
    expect(decode('\u007F')).toEqual([{ input: '', key: { backspace: true } }]);
    expect(decode('\b')).toEqual([{ input: '', key: { backspace: true } }]);
  });

  it('decodes ctrl + a letter as the letter with ctrl, and ctrl-c as c', () => {
    expect(decode('\u0003')).toEqual([{ input: 'c', key: { ctrl: true } }]);
    expect(decode('\u0001')).toEqual([{ input: 'a', key: { ctrl: true } }]);
    expect(decode('\u001A')).toEqual([{ input: 'z', key: { ctrl: true } }]);
    expect(decode('\u001B[1;5A')).toEqual([{ input: '', key: { upArrow: true, ctrl: true } }]);
  });

  it('decodes Alt + a key as meta', () => {
    expect(decode('\u001Bx')).toEqual([{ input: 'x', key: { meta: true } }]);
    expect(decode('\u001B\r')).toEqual([{ input: '', key: { return: true, meta: true } }]);
    expect(decode('\u001B\u007F')).toEqual([{ input: '', key: { backspace: true, meta: true } }]);
    expect(decode('\u001B\u001B[B')).toEqual([{ input: '', key: { downArrow: true, meta: true } }]);
    expect(decode('\u001B[1;3B')).toEqual([{ input: '', key: { downArrow: true, meta: true } }]);
  });

  it('keeps a run of typed or pasted text together, Return included, and splits other keys out', () => {
    expect(decode('jj')).toEqual([{ input: 'jj', key: {} }]);
    expect(decode('please stop soon\r')).toEqual([{ input: 'please stop soon\r', key: {} }]);
    expect(decode('héllo ✓ 日本 😀')).toEqual([{ input: 'héllo ✓ 日本 😀', key: {} }]);
    expect(decode('ab\u007Fc')).toEqual([
      { input: 'ab', key: {} },
      { input: '', key: { backspace: true } },
      { input: 'c', key: {} },
    ]);
    expect(decode('j\u001B[Bk')).toEqual([
      { input: 'j', key: {} },
      { input: '', key: { downArrow: true } },
      { input: 'k', key: {} },
    ]);
    expect(decode('\u001B[A\u001B[A')).toEqual([
      { input: '', key: { upArrow: true } },
      { input: '', key: { upArrow: true } },
    ]);
  });

  it('tells a lone ESC from the start of a sequence: held until more comes or the caller flushes', () => {
    const d = new KeyDecoder();
    expect(d.push('\u001B')).toEqual([]);
    expect(d.holding).toBe(true);
    expect(d.flush()).toEqual([{ input: '', key: { escape: true } }]);
    expect(d.holding).toBe(false);

    // A sequence split across two reads is one key.
    expect(d.push('x\u001B[')).toEqual([{ input: 'x', key: {} }]);
    expect(d.push('6~')).toEqual([{ input: '', key: { pageDown: true } }]);

    // ESC then text in the next read, after the pause: Escape, then the text.
    expect(d.push('\u001B')).toEqual([]);
    expect(d.flush()).toEqual([{ input: '', key: { escape: true } }]);
    expect(d.push('m')).toEqual([{ input: 'm', key: {} }]);

    // An unfinished sequence flushed: Escape, then what followed as text.
    expect(d.push('\u001B[')).toEqual([]);
    expect(d.flush()).toEqual([
      { input: '', key: { escape: true } },
      { input: '[', key: {} },
    ]);
    expect(d.flush()).toEqual([]);
  });

  it('swallows sequences for keys the dashboard has no use for, and keeps going', () => {
    expect(decode('\u001B[C\u001B[D\u001B[15~\u001BOPj')).toEqual([{ input: 'j', key: {} }]);
    // Focus reports never reach the keys.
    expect(decode('\u001B[I\u001B[O')).toEqual([]);
  });
});

describe('decoded keys drive the dashboard state', () => {
  const row = (id: string): WatchRow => ({
    id,
    name: 'w',
    depth: 0,
    branch: '',
    status: 'working',
    state: 'working',
    tone: 'live',
    dead: false,
    turns: 0,
    maxTurns: 20,
    tokens: 0,
    costUsd: null,
    elapsedMs: 0,
    unread: 0,
    lastLine: '',
    model: 'm',
    scripted: false,
    runtime: 'flotilla',
    approval: null,
    secrets: '',
    tmux: null,
    pid: null,
    need: null,
    queuePosition: null,
    pending: false,
  });
  const snap: Snapshot = { rows: [row('a'), row('b'), row('c')], humanUnread: 0, approvals: [], needs: 0 };
  const feed = (ui: UiState, ...chunks: string[]) => {
    const d = new KeyDecoder();
    const effects: Effect[] = [];
    for (const chunk of chunks) {
      for (const { input, key } of [...d.push(chunk), ...(d.holding ? d.flush() : [])]) {
        const r = reduceInput(ui, input, key, snap);
        ui = r.ui;
        effects.push(...r.effects);
      }
    }
    return { ui, effects };
  };

  it('arrows and j/k move, page down goes to the end, Return attaches', () => {
    expect(feed(initialUi, '\u001B[B\u001B[B').ui.selectedId).toBe('c');
    expect(feed(initialUi, 'jj', '\u001B[A').ui.selectedId).toBe('b');
    expect(feed(initialUi, '\u001B[6~').ui.selectedId).toBe('c');
    expect(feed(initialUi, 'j', '\r').effects).toEqual([{ kind: 'attach', row: snap.rows[1] }]);
  });

  it('m, typed text with a backspace, and Return in one read send the corrected text', () => {
    const r = feed(initialUi, 'm', 'hellp\u007Fo\r');
    expect(r.ui.mode.kind).toBe('browse');
    expect(r.effects).toEqual([{ kind: 'send', row: snap.rows[0], text: 'hello' }]);
  });

  it('a lone Escape leaves the message prompt without sending', () => {
    const r = feed(initialUi, 'm', 'draft', '\u001B');
    expect(r.ui).toMatchObject({ mode: { kind: 'browse' }, flash: 'message not sent' });
    expect(r.effects).toEqual([]);
  });
});
