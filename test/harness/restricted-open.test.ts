import { afterEach, describe, expect, it } from 'vitest';
import { openRestricted } from '../../src/harness/cli-host/restricted-open.js';
import { codex } from '../../src/runtimes/codex.js';
import { shellCommand } from '../../src/tmux/quote.js';
import { tmuxServer, type TmuxServer } from '../helpers/tmux.js';

/**
 * An untrusted folder's screen (Codex: "Open restricted"), answered by the shim (harness/cli-host/restricted-open.ts)
 * in a real tmux pane. The stand-in screen is a sh that shows Codex's choice and reads keys.
 */
let server: TmuxServer | undefined;
afterEach(async () => {
  await server?.kill();
  server = undefined;
});

/** A screen in a pane of its own that drops the first `lost` Enters (drawn before it reads keys), then opens. */
async function folderScreen(lost: number): Promise<{ paneId: string; socket: string }> {
  server = tmuxServer();
  const drop = Array.from({ length: lost }, () => 'read ignored').join('; ');
  const script = `printf '  Folder access\\n> 1. Open restricted\\n  2. Back\\n'; ${drop}${lost ? '; ' : ''}read chosen; clear; echo opened-restricted; sleep 600`;
  const paneId = await server.newPane(shellCommand(['sh', '-c', script]), 80, 20);
  await server.waitFor(paneId, /Open restricted/);
  return { paneId, socket: server.socket };
}

function logs(): { lines: string[]; info(o: object, m: string): void; warn(o: object, m: string): void } {
  const lines: string[] = [];
  return { lines, info: (_o, m) => lines.push(`info: ${m}`), warn: (_o, m) => lines.push(`warn: ${m}`) };
}

describe("the shim answers an untrusted folder's screen", () => {
  it('presses again when the screen took no key, and says once that it opened restricted', async () => {
    const pane = await folderScreen(1);
    const log = logs();
    await openRestricted(codex, pane, log, () => false);
    expect(await server!.capture(pane.paneId)).toContain('opened-restricted');
    expect(log.lines).toEqual(['info: Codex: the untrusted folder opened restricted (its own settings stay off)']);
  }, 60_000);

  it('a screen that takes no key at all is left to the person, and said', async () => {
    const pane = await folderScreen(20);
    const log = logs();
    await openRestricted(codex, pane, log, () => false);
    expect(await server!.capture(pane.paneId)).toContain('Open restricted');
    expect(log.lines).toEqual([
      'info: Codex: the untrusted folder opened restricted (its own settings stay off)',
      "warn: Codex's folder screen took no key (4 sent): left to the person in the pane",
    ]);
  }, 60_000);
});
