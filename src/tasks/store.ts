import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, unlinkSync } from 'node:fs';
import { isErrno } from '../errors.js';
import { writeFileAtomic } from '../layout/atomic.js';
import type { BoardPaths, Layout } from '../layout/layout.js';
import { redactValue } from '../secrets/redact.js';
import { appendEnded, hasEnded, lastEnded } from './ended-log.js';
import { activeName, idOfActive, isFinished, parseTask, type Task } from './task.js';

/**
 * A board on disk (docs/architecture.md, "Task boards"): one JSON file per task, replaced
 * atomically (temp, fsync, rename), so a reader never sees a torn task and needs no lock.
 * Beside them, indexes a reader uses to avoid reading every task:
 * - `active/<rank>-<ms>-<id>`: every task that may be unfinished, named in claim order;
 * - `claimed/<id>`: every task that may be claimed (the reaper's way to a dead claimant's work);
 * - `ended.log`: `<status> <id>` per finished task, once each (the counts; ended-log.ts).
 * Each index is a superset of what it indexes: an entry is made before the task file says
 * so and removed after it stops saying so, so a writer killed in between leaves an entry
 * too many (readers check the task file, the next writer removes it), never one too few.
 * Only a writer holding the board lock (lock.ts) changes anything.
 */

export function readTask(board: BoardPaths, id: string): Task | undefined {
  let text: string;
  try {
    text = readFileSync(board.task(id), 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'ENAMETOOLONG')) return undefined;
    throw err;
  }
  return parseTask(text) ?? undefined;
}

function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}

/**
 * The active index's names in claim order (priority, then age): one readdir and a native
 * sort, no task read and no work per name — a backlog of 10,000 costs its readdir (§14).
 */
export function activeNames(board: BoardPaths): string[] {
  const all = names(board.activeDir).sort();
  // Entries start with a digit; anything dotted sorts before them.
  let first = 0;
  while (first < all.length && all[first]!.startsWith('.')) first++;
  return first === 0 ? all : all.slice(first);
}

/** The active index's task ids in claim order, named as they are reached. */
export function* activeIds(board: BoardPaths): Generator<string> {
  for (const n of activeNames(board)) yield idOfActive(n);
}

/** Tasks that may be claimed: one readdir. */
export function claimedIds(board: BoardPaths): string[] {
  return names(board.claimedDir).filter((n) => !n.startsWith('.'));
}

/** Every task id on the board (for `list --all`): one readdir. */
export function allIds(board: BoardPaths): string[] {
  return names(board.tasksDir)
    .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
    .map((n) => n.slice(0, -5));
}

/** The boards of a fleet. */
export function boardNames(layout: Layout): string[] {
  return names(layout.boardsDir).filter((n) => !n.startsWith('.'));
}

function touch(path: string, dir: string): void {
  try {
    closeSync(openSync(path, 'a', 0o644));
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
    mkdirSync(dir, { recursive: true });
    closeSync(openSync(path, 'a', 0o644));
  }
}

function remove(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
}

/**
 * Writes a task, keeping the indexes supersets: entries it needs are made first, entries it
 * no longer needs are removed after. Call with the board lock held; `before` is the task as
 * it was (undefined for a new one).
 */
export function writeTask(board: BoardPaths, task: Task, before: Task | undefined): void {
  const active = `${board.activeDir}/${activeName(task)}`;
  if (!isFinished(task.status)) touch(active, board.activeDir);
  if (task.status === 'claimed') touch(board.claimed(task.id), board.claimedDir);
  // Titles, bodies and results never carry a secret value this process holds (§11).
  writeFileAtomic(board.task(task.id), JSON.stringify(redactValue(task), null, 2) + '\n');
  if (task.status !== 'claimed' && before?.status === 'claimed') remove(board.claimed(task.id));
  if (isFinished(task.status) && (!before || !isFinished(before.status))) settleFinished(board, task);
}

/** The index work of a finished task: its ended line (unless it has one), then its entries go. */
function settleFinished(board: BoardPaths, task: Task, logged = false): void {
  if (!logged) appendEnded(board, task.status, task.id);
  remove(board.claimed(task.id));
  remove(`${board.activeDir}/${activeName(task)}`);
}

/**
 * Every writer's first step (lock held): a writer killed after appending a finished task's
 * line but before dropping its entries left that line last; its entries go now, so no other
 * line of the log names an indexed task (ended-log.ts).
 */
export function settleLastEnded(board: BoardPaths): void {
  const id = lastEnded(board);
  if (id === undefined) return;
  const task = readTask(board, id);
  if (task && isFinished(task.status)) settleFinished(board, task, true);
}

/** Removes index entries a killed writer left behind (lock held): a finished task's, a task file never written. */
export function repairEntry(board: BoardPaths, id: string, task: Task | undefined): void {
  if (!task) {
    for (const n of names(board.activeDir)) if (idOfActive(n) === id) remove(`${board.activeDir}/${n}`);
    remove(board.claimed(id));
    return;
  }
  if (isFinished(task.status)) settleFinished(board, task, hasEnded(board, task.id));
  else if (task.status !== 'claimed') remove(board.claimed(id));
}

/** The next automatic id, `t<n>` (lock held). */
export function nextTaskId(board: BoardPaths): string {
  let n = 0;
  try {
    n = Number(readFileSync(board.seqFile, 'utf8').trim()) || 0;
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
  for (;;) {
    n++;
    // A task named by hand may hold the number already.
    if (readTask(board, `t${n}`) === undefined) break;
  }
  mkdirSync(board.dir, { recursive: true });
  writeFileAtomic(board.seqFile, `${n}\n`);
  return `t${n}`;
}
