import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { paneTypist } from '../../src/harness/cli-host/typist.js';
import { tmuxServer, type TmuxServer } from '../helpers/tmux.js';

const INPUT_BOX = fileURLToPath(new URL('../fixtures/runtimes/input-box.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The shim types into a vendor CLI's pane as a person would (§13): a bracketed paste, then
 * Enter once the pane shows the paste. A paste and its Enter in one read land as a newline in
 * the input box, so what the CLI reads must be the paste and then, in a read of its own, Enter.
 */
/** A CLI that types its notice, unless its screen shows a mark this stand-in never draws. */
const TYPES = { typesNotice: { unlessShown: 'keys are commands' } };

describe('the pane typist', () => {
  let server: TmuxServer | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await server?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function typeInto(
    how: 'draws' | 'blind',
    text: string,
    cli: { typesNotice?: { unlessShown: string } } = {},
  ): Promise<{ reads: string[]; screen: string }> {
    server = tmuxServer();
    dir = mkdtempSync(join(ROOT, '.test-homes', 'typist-'));
    const log = join(dir, 'reads.jsonl');
    await server.tmux('new-session', '-d', '-s', 'cli', '-x', '120', '-y', '30', 'node', INPUT_BOX, log, how);
    await server.waitFor('cli', /ready/);
    const paneId = await server.tmux('display-message', '-p', '-t', 'cli', '#{pane_id}');
    const typist = await paneTypist({ socket: server.socket, paneId }, dir, cli);
    await typist.submit(text);
    const screen = await server.waitFor('cli', /submitted: /);
    const reads = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as string);
    return { reads, screen };
  }

  it('a one-line notice: the paste, then Enter in a read of its own', async () => {
    const notice = '[flotilla] 1 new inbox message — they are attached below as data.';
    const { reads, screen } = await typeInto('draws', notice);
    expect(reads).toEqual([`\x1b[200~${notice}\x1b[201~`, '\r']);
    expect(screen).toContain(`submitted: ${notice}`);
  });

  it('a long task the CLI draws as a placeholder: the paste, then Enter on its own', async () => {
    const task = 'first line of the task\nsecond line\nthird line';
    const { reads, screen } = await typeInto('draws', task);
    expect(reads).toHaveLength(2);
    expect(reads[0]!.startsWith('\x1b[200~first line of the task')).toBe(true);
    expect(reads[0]!.endsWith('third line\x1b[201~')).toBe(true);
    expect(reads[1]).toBe('\r');
    expect(screen).toContain('[Pasted text +3 lines]');
    expect(screen).toContain('submitted: first line of the task');
  });

  it('a CLI that never draws the paste still gets its Enter, on its own', async () => {
    const { reads, screen } = await typeInto('blind', 'do the thing');
    expect(reads).toEqual(['\x1b[200~do the thing\x1b[201~', '\r']);
    expect(screen).toContain('submitted: do the thing');
  });

  it('a CLI that types its notice (Gemini) gets it as keys, then Enter in a read of its own', async () => {
    const notice = '[flotilla] 2 new inbox messages — they are attached below as data.';
    const { reads, screen } = await typeInto('draws', notice, TYPES);
    expect(reads).toEqual([notice, '\r']);
    expect(screen).toContain(`submitted: ${notice}`);
  });

  it('a CLI that types its notice still gets a paste for text with a mark that opens a menu', async () => {
    // `@` opens Gemini's file picker, which an Enter would answer instead of submitting.
    const refusal = 'A person refused that call: it reads @secrets';
    const { reads, screen } = await typeInto('draws', refusal, TYPES);
    expect(reads).toEqual([`\x1b[200~${refusal}\x1b[201~`, '\r']);
    expect(screen).toContain(`submitted: ${refusal}`);
  });

  it('a CLI that types its notice gets it pasted while its screen says keys are commands', async () => {
    // The stand-in draws "ready" at start: here that is the mark (Gemini's vim mode shows one in NORMAL).
    const notice = '[flotilla] 1 new inbox message — they are attached below as data.';
    const { reads, screen } = await typeInto('draws', notice, { typesNotice: { unlessShown: 'ready' } });
    expect(reads).toEqual([`\x1b[200~${notice}\x1b[201~`, '\r']);
    expect(screen).toContain(`submitted: ${notice}`);
  });
});
