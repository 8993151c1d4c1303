import { sleep } from '../../sleep.js';
import type { Runtime } from '../../runtimes/types.js';

/** How long after start the CLI may take to show its folder screen. */
const WATCH_MS = 120_000;
/** A key the screen did not take (sent as it drew, on a busy machine) is pressed again after this, a few times. */
const AGAIN_MS = 1_000;
const PRESSES = 4;

/**
 * A CLI that stands at a folder screen in a folder it was told is untrusted (Codex: "Open
 * restricted", its own settings off): the shim opens the folder restricted, as a person who
 * does not trust it would, so the agent does not wait there for good. Never a screen that
 * offers to trust the folder: that one is left to the person, and said in the log. A screen
 * still there a second after the key is pressed again: Codex 0.169 can draw it before it reads
 * keys, and one sent then is lost (seen once in a full run, the agent then stood there).
 */
export async function openRestricted(
  runtime: Pick<Runtime, 'restrictedOpen' | 'title'>,
  pane: { socket: string | null; paneId: string },
  log: { info(o: object, m: string): void; warn(o: object, m: string): void },
  until: () => boolean,
): Promise<void> {
  const screen = runtime.restrictedOpen;
  if (!screen) return;
  const { Tmux } = await import('../../tmux/client.js');
  const tmux = new Tmux({ socket: pane.socket });
  const end = Date.now() + WATCH_MS;
  let presses = 0;
  let pressedAt = 0;
  while (Date.now() < end && !until()) {
    const text = await tmux.capturePane(pane.paneId).catch(() => '');
    if (!text.includes(screen.shows)) {
      if (presses) return;
    } else if (text.includes(screen.unless)) {
      log.warn(
        {},
        `${runtime.title} asks whether to trust this folder, which its person has not trusted (flotilla trust): left to the person in the agent's pane`,
      );
      return;
    } else if (!presses || Date.now() - pressedAt >= AGAIN_MS) {
      if (presses === PRESSES) {
        log.warn({}, `${runtime.title}'s folder screen took no key (${PRESSES} sent): left to the person in the pane`);
        return;
      }
      await tmux.sendKeys(pane.paneId, [screen.key]);
      if (!presses)
        log.info({}, `${runtime.title}: the untrusted folder opened restricted (its own settings stay off)`);
      presses++;
      pressedAt = Date.now();
    }
    await sleep(250);
  }
}
