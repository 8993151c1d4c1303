import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from '../../sleep.js';
import type { Typist } from './idle.js';

/**
 * Types into a vendor CLI's pane as a person would: the text as one bracketed paste, then Enter
 * on its own, pressed again while the screen shows it was not taken.
 */
export async function paneTypist(place: { socket: string | null; paneId: string }, configDir: string): Promise<Typist> {
  const { Tmux } = await import('../../tmux/client.js');
  const tmux = new Tmux({ socket: place.socket });
  const buffer = `flotilla-${place.paneId.replace(/\W/g, '')}`;
  return {
    async submit(text) {
      const file = join(configDir, 'paste.txt');
      writeFileSync(file, text, { mode: 0o600 });
      await tmux.exec(['load-buffer', '-b', buffer, file]);
      await tmux.exec(['paste-buffer', '-p', '-d', '-b', buffer, '-t', place.paneId]);
      // A paste and its Enter in one read can land as a newline in the input box.
      await sleep(300);
      // On a busy machine the CLI can still be taking the paste in when Enter arrives, and the
      // Enter is lost: the text then sits in the input box and nothing happens. An Enter that was
      // taken changes the screen; one that left it as the paste did is pressed again.
      for (let press = 0; press < 3; press++) {
        const pasted = await tmux.capturePane(place.paneId);
        await tmux.exec(['send-keys', '-t', place.paneId, 'Enter']);
        if (await screenChanges(() => tmux.capturePane(place.paneId), pasted, 3_000)) return;
      }
    },
    async key(name) {
      await tmux.exec(['send-keys', '-t', place.paneId, name]);
    },
    screen: () => tmux.capturePane(place.paneId),
  };
}

/** Whether the screen differs from `from` within `ms`. */
async function screenChanges(screen: () => Promise<string>, from: string, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if ((await screen()) !== from) return true;
    await sleep(200);
  }
  return false;
}
