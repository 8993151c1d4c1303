import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { Runtime, TurnFailure } from '../../runtimes/index.js';
import { newestSessionFile } from '../../runtimes/session-file.js';
import { ownStart } from './inherited.js';

export { newestSessionFile };

/**
 * The vendor CLI's own session file, read as it grows (docs/runtimes.md, "Fail fast"). A turn
 * the vendor API ended with an error is written there by every CLI, while not every CLI runs a
 * hook for it (Codex runs none; Gemini runs its turn-end hook with no answer): this is where
 * the shim learns that a revoked key or an expired login stopped the CLI, and ends the agent
 * instead of leaving it `working` at an error in its pane.
 *
 * Polled four times a second (a model answer counts against max_turns as soon as it is
 * written): the file is this agent's own, appended whole lines at a time, and only the bytes
 * added since the last look are read.
 */
export interface SessionWatch {
  /** The session file being read, once the CLI wrote one. */
  file(): string | undefined;
  close(): void;
}

export interface SessionHandlers {
  onFailure(f: TurnFailure): void;
  /** A model answer (each once, however many lines the CLI writes it over). */
  onModel?(): void;
}

export function watchSession(
  runtime: Runtime,
  configDir: string,
  handlers: SessionHandlers,
  intervalMs = 250,
): SessionWatch {
  const answers = new Set<string>();
  let file: string | undefined;
  let offset = 0;
  let rest = '';
  let searched = 0;
  let newest: string | undefined;
  const look = (): void => {
    // The folder is searched every 2 s (a new session file is rare); the file itself is looked at every tick.
    if (!newest || Date.now() - searched >= 2000) {
      newest = newestSessionFile(runtime, configDir) ?? newest;
      searched = Date.now();
    }
    if (!newest) return;
    // A new session file (a resumed or restarted session): read it from its start.
    // An inherited start (a resumed session) was the predecessor's: only what follows is this agent's.
    if (newest !== file) {
      file = newest;
      offset = ownStart(newest);
      rest = '';
    }
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      return;
    }
    if (size <= offset) return;
    const text = rest + readRange(file, offset, size);
    offset = size;
    const lines = text.split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      const seen = runtime.sessionLine(line);
      if (seen?.kind === 'failure') handlers.onFailure(seen.failure);
      if (seen?.kind === 'model' && (seen.id === undefined || !answers.has(seen.id))) {
        if (seen.id !== undefined) answers.add(seen.id);
        handlers.onModel?.();
      }
    }
  };
  const timer = setInterval(() => {
    try {
      look();
    } catch {
      /* a file mid-rotation: the next look reads it */
    }
  }, intervalMs);
  timer.unref();
  return { file: () => file, close: () => clearInterval(timer) };
}

/** The last failure of the session's latest turn, if that turn ended in one. */
export function lastTurnFailure(runtime: Pick<Runtime, 'sessionLine'>, text: string): TurnFailure | undefined {
  let failure: TurnFailure | undefined;
  for (const line of text.split('\n')) {
    const seen = runtime.sessionLine(line);
    if (seen?.kind === 'turn') failure = undefined;
    else if (seen?.kind === 'failure') failure = seen.failure;
  }
  return failure;
}

function readRange(file: string, from: number, to: number): string {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(to - from);
    const n = readSync(fd, buf, 0, buf.length, from);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
