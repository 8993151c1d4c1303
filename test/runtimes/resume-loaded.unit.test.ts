import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { carrySession, resumedSessionLoaded } from '../../src/harness/cli-host/inherited.js';
import type { Layout } from '../../src/layout/layout.js';
import { gemini } from '../../src/runtimes/gemini.js';

/**
 * A resumed Gemini CLI reads the session it resumes while `-i`'s first turn has already begun,
 * and swaps it in for the chat it started with only then: the first turn-start hook answers once
 * the session file shows the swap (cli-host/hook.ts), or the model is asked without the earlier
 * turns. Lines as Gemini 0.61's ChatRecordingService writes them (test/runtimes/resume.test.ts
 * drives the CLI itself).
 */
const ID = 'ad7f792d-986c-4e40-b7c0-93ac8efa8f60';
const j = (o: unknown) => JSON.stringify(o) + '\n';
const HEADER = j({ sessionId: ID, projectHash: 'h', startTime: 't0', lastUpdated: 't0', kind: 'main' });
const OLD_TURN = j({ id: 'm1', timestamp: 't1', type: 'user', content: [{ text: 'first-task' }] });

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The predecessor's folder with its session, carried into the resumed agent's as `flotilla resume` does. */
function carried(): { configDir: string; file: string } {
  // The predecessor's session file, as its Gemini left it: what the resumed agent starts from.
  dir = mkdtempSync(join(tmpdir(), 'flotilla-resume-loaded-'));
  const layout = { runtimeDir: (id: string) => join(dir, id) } as unknown as Layout;
  const chats = '.gemini/tmp/p/chats';
  mkdirSync(join(dir, 'old', chats), { recursive: true });
  writeFileSync(join(dir, 'old', '.gemini/projects.json'), '{}');
  writeFileSync(join(dir, 'old', chats, 'session-2026-11-29T15-26-ad7f792d.jsonl'), HEADER + OLD_TURN);
  const configDir = join(dir, 'new');
  mkdirSync(configDir);
  expect(carrySession(layout, gemini, 'old', configDir)).toEqual({ sessionId: ID });
  return { configDir, file: join(configDir, chats, 'session-2026-11-29T15-26-ad7f792d.jsonl') };
}

describe("a resumed Gemini's first turn waits for the session it resumes", () => {
  it('is not loaded while only the chat Gemini started with wrote into the same file (same minute, same id)', async () => {
    const { configDir, file } = carried();
    appendFileSync(file, HEADER + j({ $set: { messages: [{ id: 'env', type: 'user', content: [] }] } }));
    expect(await resumedSessionLoaded(configDir, gemini.resumeLoaded!, 0)).toBe(false);
  });

  it('is loaded once the resumed chat marked the file, and waits for that mark', async () => {
    const { configDir, file } = carried();
    let marked = false;
    setTimeout(() => {
      marked = true;
      appendFileSync(file, j({ $set: { sessionId: ID } }));
    }, 150);
    expect(await resumedSessionLoaded(configDir, gemini.resumeLoaded!, 30_000)).toBe(true);
    expect(marked).toBe(true);
  });

  it("does not count the predecessor's own resume: only what this agent's CLI appended", async () => {
    const { configDir, file } = carried();
    expect(await resumedSessionLoaded(configDir, (text) => text.includes('first-task'), 0)).toBe(false);
    appendFileSync(file, j({ $set: { sessionId: ID } }));
    expect(await resumedSessionLoaded(configDir, gemini.resumeLoaded!, 0)).toBe(true);
  });

  it('an agent that inherited no session waits for nothing', async () => {
    dir = mkdtempSync(join(tmpdir(), 'flotilla-resume-loaded-'));
    expect(await resumedSessionLoaded(dir, gemini.resumeLoaded!, 30_000)).toBe(true);
  });
});
