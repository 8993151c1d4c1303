import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { WatchActions } from '../../src/watch/actions.js';
import { Dashboard, type DashboardFeed } from '../../src/watch/dashboard.js';
import type { Snapshot, WatchRow } from '../../src/watch/rows.js';
import { eventually } from '../helpers/tmux.js';

/**
 * The dashboard loop against a terminal made of two event emitters: what it writes is what a
 * terminal would show. The tmux tests (dashboard.test.ts) drive the real CLI; these cover the
 * exits and the redraw rules without a terminal.
 */

class FakeInput extends EventEmitter {
  raw: boolean[] = [];
  paused = false;
  setRawMode(on: boolean): void {
    this.raw.push(on);
  }
  setEncoding(): void {}
  resume(): void {
    this.paused = false;
  }
  pause(): void {
    this.paused = true;
  }
  unref(): void {}
  type(text: string): void {
    this.emit('data', text);
  }
}

class FakeOutput extends EventEmitter {
  columns = 80;
  rows = 24;
  written = '';
  write(text: string): boolean {
    this.written += text;
    return true;
  }
  /** The text of the last frame written (styles and moves removed). */
  lastFrame(): string {
    const frames = this.written.split('\u001B[H');
    // eslint-disable-next-line no-control-regex
    return (frames.at(-1) ?? '').replace(/\u001B\[[\d;?]*[A-Za-z]/g, '');
  }
}

function row(id: string): WatchRow {
  return {
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
    lastLine: `line of ${id}`,
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
  };
}

class FakeFeed implements DashboardFeed {
  current: Snapshot = { rows: [row('alpha-aaaaaa'), row('bravo-bbbbbb')], humanUnread: 0, approvals: [], needs: 0 };
  refreshed = 0;
  private fn: ((s: Snapshot) => void) | null = null;
  subscribe(fn: (s: Snapshot) => void): () => void {
    this.fn = fn;
    return () => {
      this.fn = null;
    };
  }
  refresh(): void {
    this.refreshed++;
  }
  publish(s: Snapshot): void {
    this.current = s;
    this.fn?.(s);
  }
}

const actions: WatchActions = {
  attach: (r) => Promise.resolve(`switched to ${r.id}`),
  send: (r, t) => Promise.resolve(`sent "${t}" to ${r.id}`),
  cancel: (r) => Promise.resolve(`cancelled ${r.id}`),
  approve: (a) => Promise.resolve(`approved ${a.requestId}`),
  deny: (a) => Promise.resolve(`denied ${a.requestId}`),
  seen: () => Promise.resolve(''),
};

const tick = () => new Promise((r) => setImmediate(r));

function setup() {
  const input = new FakeInput();
  const output = new FakeOutput();
  const feed = new FakeFeed();
  let draws = 0;
  const dash = new Dashboard({
    feed,
    actions,
    title: 'flotilla · t',
    input,
    output,
    styles: false,
    onDraw: () => {
      draws++;
    },
    escapeMs: 5,
  });
  const done = dash.start();
  return { input, output, feed, dash, done, draws: () => draws };
}

describe('the dashboard loop', () => {
  it('draws the first frame at once, in raw mode on the alternate screen', () => {
    const { input, output, draws, dash } = setup();
    expect(input.raw).toEqual([true]);
    expect(output.written).toContain('\u001B[?1049h');
    expect(output.lastFrame()).toMatch(/^flotilla · t {2}2 agents, 2 working/);
    expect(output.lastFrame()).toMatch(/› alpha-aaaaaa/);
    expect(draws()).toBe(1);
    dash.stop();
  });

  it('draws once for a burst of keys and feed changes, and never the same frame twice', async () => {
    const { input, output, feed, draws, dash } = setup();
    input.type('j');
    input.type('k');
    input.type('j');
    feed.publish({ ...feed.current, humanUnread: 3 });
    await tick();
    expect(draws()).toBe(2);
    expect(output.lastFrame()).toMatch(/3 unread for you[\s\S]*› bravo-bbbbbb/);
    // Same data again, and a key that changes nothing on screen: no draw.
    feed.publish({ ...feed.current });
    input.type('j');
    await tick();
    expect(draws()).toBe(2);
    dash.stop();
  });

  it('redraws on a resize even when the frame is the same, on a cleared screen', async () => {
    const { output, draws, dash } = setup();
    output.rows = 30;
    const before = output.written.length;
    output.emit('resize');
    await tick();
    expect(draws()).toBe(2);
    expect(output.written.slice(before)).toContain('\u001B[2J');
    output.columns = 100;
    output.emit('resize');
    await tick();
    expect(output.lastFrame()).toMatch(/LAST LINE/);
    expect(draws()).toBe(3);
    dash.stop();
  });

  it("runs a key's action and shows its answer", async () => {
    const { input, output, feed, dash } = setup();
    input.type('m');
    await tick();
    expect(output.lastFrame()).toMatch(/message to alpha-aaaaaa \(⏎ send, Esc cancel\): ▏/);
    input.type('hi\r');
    await eventually(() => /sent "hi"/.test(output.lastFrame()), 30_000, 'the sent line');
    expect(output.lastFrame()).toMatch(/sent "hi" to alpha-aaaaaa/);
    expect(feed.refreshed).toBe(1);
    dash.stop();
  });

  it('a lone Escape cancels the prompt; an arrow (ESC [ B) moves', async () => {
    const { input, output, dash } = setup();
    input.type('m');
    input.type('\u001B');
    await eventually(() => /message not sent/.test(output.lastFrame()), 30_000, 'the cancel line');
    expect(output.lastFrame()).toMatch(/message not sent/);
    input.type('\u001B[B');
    await tick();
    expect(output.lastFrame()).toMatch(/› bravo-bbbbbb/);
    dash.stop();
  });

  for (const [what, end] of [
    ['q', (t: ReturnType<typeof setup>) => t.input.type('q')],
    ['ctrl-c, even while typing a message', (t: ReturnType<typeof setup>) => t.input.type('mhello\u0003')],
    ['a signal (stop)', (t: ReturnType<typeof setup>) => t.dash.stop()],
    [
      'EIO on the terminal (its window closed)',
      (t: ReturnType<typeof setup>) => t.output.emit('error', Object.assign(new Error('write EIO'), { code: 'EIO' })),
    ],
    ['the end of input', (t: ReturnType<typeof setup>) => t.input.emit('end')],
  ] as const) {
    it(`ends on ${what} and gives the terminal back`, async () => {
      const t = setup();
      end(t);
      await t.done;
      expect(t.input.raw).toEqual([true, false]);
      expect(t.input.paused).toBe(true);
      expect(t.output.written.endsWith('\u001B[?25h\u001B[?7h\u001B[?1049l')).toBe(true);
      expect(t.input.listenerCount('data')).toBe(0);
      // Nothing more is drawn after the end.
      const after = t.output.written.length;
      t.feed.publish({ ...t.feed.current, humanUnread: 9 });
      await tick();
      expect(t.output.written.length).toBe(after);
    });
  }
});
