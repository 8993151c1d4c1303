import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { paneTypist } from '../../src/harness/cli-host/typist.js';
import { gemini } from '../../src/runtimes/gemini.js';
import { tmuxServer, type TmuxServer } from '../helpers/tmux.js';

const GUARDED_BOX = fileURLToPath(new URL('../fixtures/runtimes/guarded-box.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NOTICE = '[flotilla] 1 new inbox message — they are attached below as data.';

/**
 * A mail notice typed into an idle vendor CLI (§13) is submitted exactly once, as typed. Gemini
 * CLI 0.61 takes an Enter as a newline for a while after it read a paste (longer on a loaded
 * machine); the stand-in here does the same for as long as it is told, so the typist's Enter
 * lands as a newline and it must undo that and press again — never leave the text in the box,
 * never submit it twice, never with the newline in it.
 */
describe('the pane typist and a paste guard', () => {
  let server: TmuxServer | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await server?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function typeInto(guardMs: number, text: string): Promise<string> {
    server = tmuxServer();
    // The typist's own folder for its paste file (a shim's CLI config folder), not a home: no CLI runs here.
    dir = mkdtempSync(join(ROOT, '.test-homes', 'typist-guard-'));
    const paneId = await server.tmux(
      ...['new-session', '-d', '-P', '-F', '#{pane_id}', '-x', '120', '-y', '30'],
      ...['node', GUARDED_BOX, String(guardMs)],
    );
    await server.waitFor(paneId, /Type your message/);
    const typist = await paneTypist({ socket: server.socket, paneId }, dir, {
      guardMs: gemini.pasteGuardMs,
      inputPrompt: gemini.inputPrompt,
      question: gemini.paneQuestion?.shows,
    });
    await typist.submit(text);
    // A key after submit() returned: once the box shows it, every key the typist sent was read.
    await server.tmux('send-keys', '-t', paneId, 'Z');
    await server.waitFor(paneId, /^ > Z$/m);
    return server.tmux('capture-pane', '-p', '-J', '-t', paneId);
  }

  it('an Enter taken as a newline is undone and pressed again: submitted once, as typed', async () => {
    // Longer than the typist's own wait after the paste, so its first Enters land as newlines.
    const screen = await typeInto(800, NOTICE);
    expect(screen.match(/SUBMITTED:/g)).toHaveLength(1);
    expect(screen).toContain(`SUBMITTED:${JSON.stringify(NOTICE)}`);
  });

  it('an Enter after the guard is taken at once: submitted once, as typed', async () => {
    const screen = await typeInto(30, NOTICE);
    expect(screen.match(/SUBMITTED:/g)).toHaveLength(1);
    expect(screen).toContain(`SUBMITTED:${JSON.stringify(NOTICE)}`);
  });

  it('a long task wrapped over rows: a newline below its last row is undone too', async () => {
    const task = `${'word '.repeat(40)}end of the task`;
    const screen = await typeInto(800, task);
    expect(screen.match(/SUBMITTED:/g)).toHaveLength(1);
    expect(screen).toContain(`SUBMITTED:${JSON.stringify(task)}`);
  });
});
