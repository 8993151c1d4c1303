import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/fleet.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/pane/fake-session.mjs', import.meta.url));
export const REPL_DIST = fileURLToPath(new URL('../../dist/harness/repl.js', import.meta.url));

export interface Call {
  call: string;
  text?: string;
  status?: string;
  reason?: string;
  name?: string;
  prompt?: string;
  background?: boolean;
  answer?: Record<string, unknown>;
}

/** The real REPL over a fake session, running in an 80×24 pane of a private tmux server. */
export interface PaneRun {
  tmux: TmuxServer;
  target: string;
  /** Types text literally (no Enter). */
  type(text: string): Promise<void>;
  /** Sends tmux key names: `Enter`, `C-c`, `C-d`. */
  keys(...names: string[]): Promise<void>;
  /** Makes the fake session emit events / change state (see the fixture). */
  control(...cmds: object[]): void;
  calls(): Call[];
  waitForCall(pred: (c: Call) => boolean, what: string): Promise<Call>;
  waitFor(pattern: RegExp): Promise<string>;
  /** The screen with trailing blank lines removed, as lines. */
  screenLines(): Promise<string[]>;
  close(): Promise<void>;
}

export async function startPane(opts: { scripted?: boolean } = {}): Promise<PaneRun> {
  const tmp = tempDir('flotilla-pane-');
  const tmux = tmuxServer();
  const args = [process.execPath, FIXTURE, tmp.dir, ...(opts.scripted ? ['--scripted'] : [])];
  await tmux.tmux('new-session', '-d', '-s', 'pane', '-x', '80', '-y', '24', ...args);
  const target = 'pane:0.0';
  const calls = (): Call[] => {
    const file = join(tmp.dir, 'calls.jsonl');
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Call);
  };
  const run: PaneRun = {
    tmux,
    target,
    type: async (text) => void (await tmux.tmux('send-keys', '-t', target, '-l', text)),
    keys: async (...names) => void (await tmux.tmux('send-keys', '-t', target, ...names)),
    control: (...cmds) =>
      appendFileSync(join(tmp.dir, 'control.jsonl'), cmds.map((c) => JSON.stringify(c) + '\n').join('')),
    calls,
    waitForCall: (pred, what) => eventually(() => calls().find(pred), 15_000, what),
    waitFor: (pattern) => tmux.waitFor(target, pattern),
    async screenLines() {
      const lines = (await tmux.capture(target)).split('\n');
      while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop();
      return lines;
    },
    async close() {
      await tmux.kill();
      tmp.cleanup();
    },
  };
  // Ready when the prompt is drawn under the status line.
  await run.waitFor(/lead-ab12cd · idle[^\n]*\n› /);
  return run;
}
