import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { isErrno } from '../errors.js';
import { isProcessAlive, selfProcess } from './proc.js';

interface Owner {
  pid: number;
  start: string | null;
}

/**
 * At-least-once work with an exactly-once effect, across processes: runs `work` unless
 * `done` exists, and creates `done` only as the LAST step, after `work` succeeded. While a
 * live process runs it, other callers skip; when that process dies half-way (SIGKILL, a
 * full disk), the next caller runs it again. So `work` must be safe to repeat after a crash
 * (a completion delivered under a fixed name is). Turns are numbered lock files
 * `<done>.run-<k>` holding their runner's pid and start time: a dead runner's turn is
 * skipped, never broken, so two callers can never both believe they hold one.
 * Returns true when this call did the work.
 */
export async function doneOnce(
  done: string,
  work: () => Promise<void>,
  info: Record<string, unknown> = {},
): Promise<boolean> {
  if (existsSync(done)) return false;
  const turn = takeTurn(done);
  if (turn === null) return false;
  let finished = false;
  try {
    if (existsSync(done)) return false;
    await work();
    finished = createWith(done, { pid: selfProcess().pid, done_at: new Date().toISOString(), ...info });
    return finished;
  } finally {
    // Done: the marker speaks from now on. Failed while alive: let the next caller try at once.
    try {
      unlinkSync(turn);
    } catch {
      /* gone with its directory */
    }
  }
}

/** True once `doneOnce(done, …)` has finished its work. */
export function isDone(done: string): boolean {
  return existsSync(done);
}

function takeTurn(done: string): string | null {
  const me: Owner = selfProcess();
  for (let k = 0; k < 1000; k++) {
    const path = `${done}.run-${k}`;
    if (createWith(path, me)) return path;
    const owner = readOwner(path);
    // A live runner (this process included) is on it; it finishes, or dies and leaves its turn behind.
    if (owner === undefined || isProcessAlive(owner.pid, owner.start)) return null;
  }
  return null;
}

/** Creates `path` with `content` atomically (a temp file linked into place): false if it exists. */
function createWith(path: string, content: object): boolean {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(content) + '\n', { flag: 'wx', mode: 0o644 });
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(tmp, JSON.stringify(content) + '\n', { flag: 'wx', mode: 0o644 });
  }
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    if (isErrno(err, 'EEXIST')) return false;
    throw err;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
  }
}

/** The runner named in a turn file; undefined while unreadable (treated as live: skip, do not break). */
function readOwner(path: string): Owner | undefined {
  try {
    const o = JSON.parse(readFileSync(path, 'utf8')) as Partial<Owner>;
    return typeof o.pid === 'number'
      ? { pid: o.pid, start: typeof o.start === 'string' ? o.start : null }
      : { pid: 0, start: null };
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { pid: 0, start: null };
    // A turn file holding garbage is a dead runner's leftover: skip it.
    if (err instanceof SyntaxError) return { pid: 0, start: null };
    return undefined;
  }
}
