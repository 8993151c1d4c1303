import { cpSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Layout } from '../../layout/layout.js';
import type { Runtime } from '../../runtimes/index.js';
import { newestSessionFile } from '../../runtimes/session-file.js';
import { sleep } from '../../sleep.js';

/**
 * A resumed vendor agent continues its predecessor's own session (§8; docs/runtimes.md,
 * "Resume and transcript"): the predecessor's session files (and Gemini's project map, which
 * names their folder) are copied into the new agent's folder (`Runtime.sessionState`), and the
 * CLI's resume command opens the session there. The old
 * agent's folder stays as it was: its transcript is still its own, and a second resume of it
 * starts from the same place.
 *
 * The session file then starts with turns the predecessor already paid for and counted:
 * `inherited.json` records how much of it was inherited (bytes, tokens, answers), so this
 * agent's limits count only its own answers and its usage is only its own.
 */
const INHERITED = 'inherited.json';

interface Inherited {
  file: string;
  bytes: number;
  inputTokens: number;
  outputTokens: number;
  turns: number;
}

/** Copies `fromId`'s CLI folder into `configDir`; the session id to resume, or why it cannot be. */
export function carrySession(
  layout: Layout,
  runtime: Runtime,
  fromId: string,
  configDir: string,
): { sessionId: string } | { error: string } {
  const from = layout.runtimeDir(fromId);
  const file = newestSessionFile(runtime, from);
  if (!file)
    return {
      error: `cannot resume '${fromId}': ${runtime.title} left no session file in ${from} — spawn a new agent instead`,
    };
  const text = readFileSync(file, 'utf8');
  const sessionId = runtime.sessionId(file, text);
  if (!sessionId)
    return {
      error: `cannot resume '${fromId}': ${file} names no ${runtime.title} session id — spawn a new agent instead`,
    };
  for (const part of runtime.sessionState) {
    if (existsSync(join(from, part)))
      cpSync(join(from, part), join(configDir, part), { recursive: true, force: true, verbatimSymlinks: true });
  }
  const copy = join(configDir, relative(from, file));
  const usage = runtime.parseUsage(text);
  const inherited: Inherited = {
    file: copy,
    bytes: statSync(copy).size,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    turns: usage.turns,
  };
  writeFileSync(join(configDir, INHERITED), JSON.stringify(inherited), { mode: 0o600 });
  return { sessionId };
}

/** What of `file` this agent inherited (nothing for a session it started itself). */
function inheritedOf(file: string): Inherited | undefined {
  // The session file sits somewhere below the agent's folder, which holds inherited.json.
  for (let dir = dirname(file), i = 0; i < 8 && dir !== dirname(dir); dir = dirname(dir), i++) {
    let found: Inherited;
    try {
      found = JSON.parse(readFileSync(join(dir, INHERITED), 'utf8')) as Inherited;
    } catch {
      continue;
    }
    return found.file === file ? found : undefined;
  }
  return undefined;
}

/**
 * Whether the CLI has loaded the session this agent inherited (Runtime.resumeLoaded): what it
 * appended to the copied session file shows it. Waits up to `waitMs`; true at once for an
 * agent that inherited none.
 */
export async function resumedSessionLoaded(
  configDir: string,
  loaded: (appended: string) => boolean,
  waitMs: number,
): Promise<boolean> {
  let inherited: Inherited;
  try {
    inherited = JSON.parse(readFileSync(join(configDir, INHERITED), 'utf8')) as Inherited;
  } catch {
    return true;
  }
  const end = Date.now() + waitMs;
  for (;;) {
    try {
      if (loaded(readFileSync(inherited.file).subarray(inherited.bytes).toString('utf8'))) return true;
    } catch {
      /* not there: nothing loaded it yet */
    }
    if (Date.now() >= end) return false;
    await sleep(20);
  }
}

/** Where this agent's own part of a session file begins (0 unless it was inherited). */
export function ownStart(file: string): number {
  return inheritedOf(file)?.bytes ?? 0;
}

/** This agent's own token usage and model answers in a session file (the inherited part left out). */
export function ownUsage(
  runtime: Runtime,
  file: string | undefined,
): { usage: { inputTokens: number; outputTokens: number; costUsd: null }; turns: number } | undefined {
  if (!file) return undefined;
  try {
    const u = runtime.parseUsage(readFileSync(file, 'utf8'));
    const base = inheritedOf(file);
    const less = (n: number, b: number | undefined) => Math.max(0, n - (b ?? 0));
    return {
      usage: {
        inputTokens: less(u.inputTokens, base?.inputTokens),
        outputTokens: less(u.outputTokens, base?.outputTokens),
        costUsd: null,
      },
      turns: less(u.turns, base?.turns),
    };
  } catch {
    return undefined;
  }
}
