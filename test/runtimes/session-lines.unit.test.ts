import { appendFileSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lastTurnFailure, newestSessionFile, watchSession } from '../../src/harness/cli-host/session-watch.js';
import { claude, claudeSessionLine } from '../../src/runtimes/claude.js';
import { codexSessionLine } from '../../src/runtimes/codex.js';
import { geminiSessionLine } from '../../src/runtimes/gemini.js';
import type { TurnFailure } from '../../src/runtimes/types.js';
import { tempDir } from '../helpers/fleet.js';

/**
 * What each pinned CLI writes in its session file when the vendor API ends a turn (the lines
 * as Claude Code 2.1.197, Codex 0.169.0 and Gemini CLI 0.61.0 wrote them against a server
 * answering 401), read as a turn failure, an authentication one or not.
 */
const CLAUDE_401 = JSON.stringify({
  type: 'assistant',
  message: {
    model: '<synthetic>',
    role: 'assistant',
    content: [{ type: 'text', text: 'Invalid API key · Fix external API key' }],
  },
  error: 'authentication_failed',
  isApiErrorMessage: true,
  apiErrorStatus: 401,
});
const CLAUDE_529 = JSON.stringify({
  type: 'assistant',
  message: { content: [{ type: 'text', text: 'API Error: Repeated 529 Overloaded errors' }] },
  error: 'overloaded',
  isApiErrorMessage: true,
  apiErrorStatus: 529,
});
const CLAUDE_PROMPT = JSON.stringify({
  promptId: 'p1',
  type: 'user',
  message: { role: 'user', content: 'hello-claude' },
});
const CODEX_401 = JSON.stringify({
  type: 'event_msg',
  payload: {
    type: 'task_complete',
    last_agent_message: null,
    error: {
      message:
        'unexpected status 401 Unauthorized: Incorrect API key provided: sk-fake***., url: http://127.0.0.1:1/v1/responses',
      codex_error_info: { http_connection_failed: { http_status_code: 401 } },
    },
  },
});
const CODEX_500 = JSON.stringify({
  type: 'event_msg',
  payload: {
    type: 'task_complete',
    error: {
      message: 'stream disconnected before completion',
      codex_error_info: { http_connection_failed: { http_status_code: 500 } },
    },
  },
});
const CODEX_DONE = JSON.stringify({
  type: 'event_msg',
  payload: { type: 'task_complete', last_agent_message: 'done', error: null },
});
const CODEX_START = JSON.stringify({ type: 'event_msg', payload: { type: 'task_started', turn_id: 't' } });
const GEMINI_401 = JSON.stringify({
  id: 'e',
  type: 'error',
  content:
    '[API Error: {"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}]',
});
const GEMINI_429 = JSON.stringify({
  id: 'e',
  type: 'error',
  content: '[API Error: {"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}]',
});
const GEMINI_USER = JSON.stringify({ id: 'u', type: 'user', content: [{ text: 'hello-gemini' }] });

describe('session lines: a turn the vendor API ended', () => {
  it('Claude Code: its synthetic API-error message, in its own words; 401 is an authentication failure, 529 is not', () => {
    expect(claudeSessionLine(CLAUDE_401)).toEqual({
      kind: 'failure',
      failure: { reason: 'Claude Code: Invalid API key · Fix external API key (HTTP 401)', auth: true },
    });
    expect(claudeSessionLine(CLAUDE_529)).toMatchObject({ kind: 'failure', failure: { auth: false } });
    expect(claudeSessionLine(CLAUDE_PROMPT)).toEqual({ kind: 'turn' });
    // A model answer (max_turns counts it once by its id, however many lines it spans).
    expect(
      claudeSessionLine('{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"fine"}]}}'),
    ).toEqual({ kind: 'model', id: 'msg_1' });
  });

  it('Codex: task_complete with an error; its HTTP status decides authentication; a clean task_complete is no failure', () => {
    expect(codexSessionLine(CODEX_401)).toMatchObject({
      kind: 'failure',
      failure: { auth: true, reason: expect.stringContaining('401 Unauthorized') },
    });
    expect(codexSessionLine(CODEX_500)).toMatchObject({ kind: 'failure', failure: { auth: false } });
    expect(codexSessionLine(CODEX_DONE)).toBeUndefined();
    expect(codexSessionLine(CODEX_START)).toEqual({ kind: 'turn' });
    expect(
      codexSessionLine(
        JSON.stringify({
          type: 'event_msg',
          payload: { type: 'token_count', info: { total_token_usage: { input_tokens: 5 } } },
        }),
      ),
    ).toEqual({ kind: 'model' });
    expect(
      codexSessionLine(JSON.stringify({ type: 'event_msg', payload: { type: 'token_count', info: null } })),
    ).toBeUndefined();
  });

  it('Gemini CLI: an error entry; 401/UNAUTHENTICATED is an authentication failure, 429 is not', () => {
    expect(geminiSessionLine(GEMINI_401)).toMatchObject({
      kind: 'failure',
      failure: { auth: true, reason: expect.stringContaining('UNAUTHENTICATED') },
    });
    expect(geminiSessionLine(GEMINI_429)).toMatchObject({ kind: 'failure', failure: { auth: false } });
    expect(geminiSessionLine(GEMINI_USER)).toEqual({ kind: 'turn' });
    expect(
      geminiSessionLine(JSON.stringify({ id: 'g1', type: 'gemini', content: 'hi', tokens: { input: 3, output: 1 } })),
    ).toEqual({ kind: 'model', id: 'g1' });
    expect(geminiSessionLine('not json "type":"error"')).toBeUndefined();
  });

  it('the latest turn failed only when no turn began after the failure', () => {
    expect(lastTurnFailure({ sessionLine: geminiSessionLine }, [GEMINI_USER, GEMINI_401].join('\n'))).toMatchObject({
      auth: true,
    });
    expect(
      lastTurnFailure({ sessionLine: geminiSessionLine }, [GEMINI_USER, GEMINI_401, GEMINI_USER].join('\n')),
    ).toBeUndefined();
  });
});

describe('the session watch', () => {
  const dirs: { cleanup(): void }[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.cleanup();
  });

  it('finds the newest session file under the CLI folder and reports a failure appended to it, once', async () => {
    const d = tempDir('flotilla-session-');
    dirs.push(d);
    const folder = join(d.dir, 'projects', '-p');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'old.jsonl'), `${CLAUDE_401}\n`);
    utimesSync(join(folder, 'old.jsonl'), new Date(1000), new Date(1000));
    writeFileSync(join(folder, 'current.jsonl'), `${CLAUDE_PROMPT}\n`);
    expect(newestSessionFile(claude, d.dir)).toBe(join(folder, 'current.jsonl'));
    const seen: TurnFailure[] = [];
    const watch = watchSession(claude, d.dir, { onFailure: (f) => seen.push(f) }, 50);
    try {
      // Half a line first: nothing until it is whole.
      appendFileSync(join(folder, 'current.jsonl'), CLAUDE_401.slice(0, 40));
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).toEqual([]);
      appendFileSync(join(folder, 'current.jsonl'), `${CLAUDE_401.slice(40)}\n`);
      for (let i = 0; i < 600 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).toEqual([{ reason: 'Claude Code: Invalid API key · Fix external API key (HTTP 401)', auth: true }]);
    } finally {
      watch.close();
    }
  });
});
