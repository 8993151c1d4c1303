import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { paneTypist } from '../../src/harness/cli-host/typist.js';
import { tmuxServer, type TmuxServer } from '../helpers/tmux.js';

/**
 * The shim types a vendor CLI's task and mail notices into its pane (a paste, then Enter). On a
 * busy machine the CLI can still be taking the paste in when the Enter arrives, and drop it: the
 * text sat in the input box and the agent never started (resume.test.ts, once, under load). The
 * pane here runs a stand-in input box that drops the first `LOSE` Enters without a trace on
 * screen, as the CLI did, and prints what it was given.
 */
const INPUT_BOX = `
const lose = Number(process.argv[2]);
const mode = process.argv[3] ?? '';
let text = '';
let enters = 0;
let asking = false;
// 'yolo': the input line is marked '* ', and a message taken shows above it marked '> ' (Gemini's yolo mode, with its placeholder).
const mark = mode === 'yolo' ? '* ' : '> ';
process.stdin.setRawMode(true);
process.stdout.write('\\x1b[?2004h' + mark);
process.stdin.on('data', (d) => {
  for (const ch of d.toString().replace(/\\x1b\\[20[01]~/g, '')) {
    if (ch !== '\\r') { text += ch; process.stdout.write(ch); continue; }
    if (asking) { process.stdout.write('\\r\\nQUESTION-ANSWERED\\r\\n'); continue; }
    if (++enters <= lose) {
      // 'noise': the screen changes for a reason of its own while the Enter is lost.
      if (mode === 'noise') process.stdout.write('\\r\\ni Request cancelled.\\r\\n> ' + text);
      continue;
    }
    if (mode === 'question' && text) {
      // The turn asks at once: a question of the CLI's own, with no input line below it.
      process.stdout.write('\\r\\nSUBMITTED:' + text + '\\r\\n  1. Allow once\\r\\n');
      asking = true;
      continue;
    }
    if (text && mode === 'yolo')
      process.stdout.write('\\r\\nSUBMITTED:' + text + '\\r\\n> ' + text + '\\r\\n' + mark + '  Type your message');
    else process.stdout.write(text ? '\\r\\nSUBMITTED:' + text + '\\r\\n' + mark : '\\r\\nEMPTY-ENTER\\r\\n' + mark);
    text = '';
  }
});
`;

let server: TmuxServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.kill();
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function inputBox(
  lose: number,
  mode = '',
  cli: { inputPrompt?: readonly string[]; question?: string } = {},
): Promise<{ paneId: string; typist: Awaited<ReturnType<typeof paneTypist>> }> {
  server = tmuxServer();
  dir = mkdtempSync(join(tmpdir(), 'flotilla-typist-'));
  const script = join(dir, 'box.cjs');
  writeFileSync(script, INPUT_BOX);
  const paneId = await server.newPane(`${process.execPath} ${script} ${lose} ${mode}`, 100, 20);
  await server.waitFor(paneId, mode === 'yolo' ? /^\* /m : /^> /m);
  return { paneId, typist: await paneTypist({ socket: server.socket, paneId }, dir, cli) };
}

describe('the pane typist', () => {
  it('a dropped Enter is pressed again: the text is submitted, once', async () => {
    const box = await inputBox(1);
    await box.typist.submit('fix the tests');
    const screen = await server!.waitFor(box.paneId, /SUBMITTED:fix the tests/);
    expect(screen.match(/SUBMITTED:/g)).toHaveLength(1);
  });

  it('a pane closed while it types ends the typing quietly (the agent is ending; nothing is thrown)', async () => {
    // The shim types its first task without waiting on it: a throw there would end the shim
    // before the agent's one completion is sent (claude.test.ts, a window closed, once).
    const box = await inputBox(99);
    const typing = box.typist.submit('fix the tests');
    await server!.waitFor(box.paneId, /fix the tests/);
    await server!.tmux('kill-pane', '-t', box.paneId);
    await expect(typing).resolves.toBeUndefined();
  });

  it('an Enter that was taken is not pressed again', async () => {
    const box = await inputBox(0);
    await box.typist.submit('fix the tests');
    await server!.waitFor(box.paneId, /SUBMITTED:fix the tests/);
    // submit() has returned: nothing it does comes later.
    expect(await server!.capture(box.paneId)).not.toContain('EMPTY-ENTER');
  });

  it('an Enter lost while the screen changed for a reason of its own is pressed again: submitted, once', async () => {
    // Gemini under load drew "Request cancelled" as the shim's Enter went missing (approvals.test.ts, CI).
    const box = await inputBox(1, 'noise', { inputPrompt: ['> '] });
    await box.typist.submit('The fleet refused that call');
    const screen = await server!.waitFor(box.paneId, /SUBMITTED:The fleet refused that call/);
    expect(screen.match(/SUBMITTED:/g)).toHaveLength(1);
    expect(screen).not.toContain('EMPTY-ENTER');
  });

  it('a question the CLI asks right after it took the text is never answered by a second Enter', async () => {
    const box = await inputBox(0, 'question', { inputPrompt: ['> '], question: 'Allow once' });
    await box.typist.submit('make the marker');
    // A key after submit() returned: once the box echoes it, every key the typist sent was read.
    await server!.tmux('send-keys', '-t', box.paneId, 'Z');
    const screen = await server!.waitFor(box.paneId, /Allow once\s*\n\s*Z/);
    expect(screen).toContain('SUBMITTED:make the marker');
    expect(screen).not.toContain('QUESTION-ANSWERED');
  });

  it('a text taken under a message mark of its own (Gemini yolo) is not pressed again', async () => {
    // Gemini's yolo input line is '* ', while the message it took shows above it as '> ' (runtime.inputPrompt).
    const box = await inputBox(0, 'yolo', { inputPrompt: ['> ', '* '] });
    await box.typist.submit('You have 1 new message');
    await server!.tmux('send-keys', '-t', box.paneId, 'Z');
    const screen = await server!.waitFor(box.paneId, /Type your messageZ/);
    expect(screen.match(/SUBMITTED:/g)).toHaveLength(1);
    expect(screen).not.toContain('EMPTY-ENTER');
  });
});
