import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';
import { findParentAgent } from './lineage.js';
import { parentPid, selfPid } from './proc.js';

/**
 * The harness is the authority on answers (docs/security.md, "Who may answer"): an approval
 * or a secret answer counts only when a person's process gave it, whatever the route. The
 * answering process (`flotilla approve`/`deny`, the dashboard, the chat) writes the answer
 * file naming its own host pid and keeps the file open until the harness has taken it. The
 * harness then checks, itself, that this pid really holds that very file (so naming some
 * other process, a person's shell or dashboard, proves nothing) and that no registered agent
 * is among its ancestors (so nothing an agent runs, detached or not, can answer). Inside the
 * sandbox the fleet root is read-only, so no answer file can be written at all.
 */

export type AnswerRoute = 'cli' | 'dashboard' | 'chat';
const ROUTES: ReadonlySet<string> = new Set(['cli', 'dashboard', 'chat']);

export interface HeldAnswer {
  /** Resolves true once the harness took the file (it is gone), false after `holdMs`. */
  taken: Promise<boolean>;
  /** Closes the file (and removes it when the harness never took it). */
  release(): void;
}

/** Writes `body` with this process as its answerer, atomically, and holds the file open. */
export function holdAnswer(file: string, body: object, route: AnswerRoute, holdMs = 15_000): HeldAnswer {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${selfPid()}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  let closed = false;
  const release = (): void => {
    if (closed) return;
    closed = true;
    closeSync(fd);
  };
  try {
    writeSync(fd, JSON.stringify({ ...body, answerer: { pid: selfPid(), route } }) + '\n');
    // The descriptor follows the rename: the harness finds it under the final name.
    renameSync(tmp, file);
  } catch (err) {
    release();
    rmSync(tmp, { force: true });
    throw err;
  }
  const taken = (async () => {
    const end = Date.now() + holdMs;
    while (Date.now() < end && !closed) {
      if (!existsSync(file)) return true;
      await sleep(50);
    }
    return !existsSync(file);
  })().finally(release);
  return { taken, release };
}

export type ProvenAnswer =
  | { ok: true; body: Record<string, unknown>; route: AnswerRoute; pid: number }
  | { ok: false; reason: string; route: string };

/**
 * The answer in `file` and who gave it, as the harness sees it; null while there is none (or
 * it is half-written). A refusal says why the writer is not a person.
 */
export function readProvenAnswer(layout: Layout, file: string): ProvenAnswer | null {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
  const answerer = (body.answerer ?? {}) as { pid?: unknown; route?: unknown };
  const route =
    typeof answerer.route === 'string' && ROUTES.has(answerer.route) ? (answerer.route as AnswerRoute) : null;
  const pid =
    typeof answerer.pid === 'number' && Number.isInteger(answerer.pid) && answerer.pid > 0 ? answerer.pid : null;
  if (!route || !pid)
    return { ok: false, reason: 'the answer names no answering process', route: String(answerer.route ?? 'unknown') };
  if (process.platform === 'linux' && !holdsFile(pid, file)) {
    return { ok: false, reason: `process ${pid} does not hold the answer file, so it did not write it`, route };
  }
  // Only ancestry counts: an environment says nothing about who a process is. The chat is a
  // harness answering for the person typing in its window: its own ancestors must be no agent.
  const from = route === 'chat' ? parentPid(pid) : pid;
  if (from === null) return { ok: false, reason: `process ${pid} has ended`, route };
  const agent = findParentAgent(layout, { pid: from, env: {} }).parent;
  if (agent)
    return {
      ok: false,
      reason: `it came from a process of agent '${agent.id}', and answers must come from a person`,
      route,
    };
  return { ok: true, body, route, pid };
}

function holdsFile(pid: number, file: string): boolean {
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return false;
  }
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  return fds.some((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === real;
    } catch {
      return false;
    }
  });
}
