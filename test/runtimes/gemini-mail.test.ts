import { describe, expect, it } from 'vitest';
import { gemini } from '../../src/runtimes/gemini.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { pinnedRuntimeBinary } from './helpers.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

const BURST = ['burst-mail-one', 'burst-mail-two', 'burst-mail-three'];
const LATER = 'later-mail-four';

/**
 * Mail to an idle Gemini CLI 0.61 (§13), the pinned CLI against a fake Gemini API: the shim
 * pastes a notice and presses Enter once Gemini takes it as a submit, not a newline (its paste
 * guard, harness/cli-host/typist.ts), and the turn-start hook hands the mail over. A notice typed
 * but left in the input box starts no turn and the mail never reaches the model; one submitted
 * twice starts a turn with no mail, which idle.yaml answers "Ready and idle.".
 */
describe('mail to an idle Gemini CLI', { timeout: 600_000 }, () => {
  const fleets = vendorFleets();

  it('a burst of mails sent at once, then one more: each reaches the model once, and every turn carries mail', async () => {
    const f = await fleets.open({
      runtime: gemini,
      wire: 'gemini',
      script: 'idle.yaml',
      bin: pinnedRuntimeBinary('gemini'),
      definitions: { a: DONT_ASK },
      env: (url) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'fake-key-for-a-local-server' }),
    });
    // A named model: Gemini's "auto" router would first ask a small model which one to use.
    const id = await f.spawnChild('a', 'gemini-burst', 'get ready', ['--model', 'gemini-2.5-flash']);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, 'first completion');
    await eventually(() => f.record(id).status === 'idle', 60_000, 'idle');

    const sent = await Promise.all(BURST.map((body) => f.flotilla(['send', id, body])));
    expect(sent.map((s) => s.exitCode)).toEqual([0, 0, 0]);
    await eventually(() => BURST.every((m) => f.vendor.seen().includes(m)), 240_000, 'the burst seen by the model');
    await eventually(() => f.record(id).status === 'idle', 120_000, 'idle after the burst');
    await f.flotilla(['send', id, LATER]);
    await eventually(() => f.vendor.seen().includes(LATER), 240_000, 'the later mail seen by the model');
    await eventually(() => f.record(id).status === 'idle', 120_000, 'idle after the later mail');
    // A second Enter that submitted the notice again would start its turn within this pause.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(f.record(id).status).toBe('idle');

    const woken = completionsFrom(f, 'lead-parent', id).slice(1);
    expect(woken.length).toBeGreaterThanOrEqual(2);
    for (const done of woken) expect(done.body).toContain('Woken by mail');
    // The last request carries the whole conversation: each mail in what it was given once.
    const given = f.vendor.prompts
      .at(-1)!
      .flatMap((m) => (m.role === 'user' ? m.content.map((part) => ('text' in part ? part.text : '')) : []))
      .join('\n');
    for (const m of [...BURST, LATER]) expect(given.split(`summary="${m}"`)).toHaveLength(2);
  });
});
