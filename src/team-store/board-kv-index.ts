import type { SharedKv } from '../bus/shared.js';
import { activeName, idOfActive, isFinished, parseTask, type Task, type TaskStatus } from '../tasks/task.js';

/**
 * The indexes of the fleet's boards on the bus (docs/decisions.md "The board on the bus indexes
 * its unfinished tasks"), so `claim --next`, `task list` and `status` read what is unfinished
 * and the names of what finished, never every finished task's value:
 * - `<board>.=open.<rank>-<ms>-<id>`: every task that may be unfinished, named in claim order
 *   (tasks/task.ts `activeName`), made before the task is added, dropped after it finishes;
 * - `<board>.=end.<ms>-<status>-<id>`: every finished task, by its finish time and status, made
 *   after it finishes and before its open entry is dropped;
 * - `=indexed`: the bucket's boards carry both (made once, by the first writer that finds it
 *   missing, after indexing every task there: a board written before the indexes).
 * Each index is a superset: a writer killed between its two writes leaves an open entry too
 * many (its task finished, or never added), which readers check against the task and
 * `claim --next` drops, never a finished task with neither entry. Index keys hold no value a
 * reader needs (their names say it), and are dropped whole, so listing them is one request
 * of names. The task keys `<board>.<id>` are as before, so `task show` and `--all` read as they did.
 */

const INDEXED = '=indexed';
const OPEN = '=open';
const END = '=end';
/** A task missing behind an open entry this long is an add that was killed, not one under way. */
const ADD_GRACE_MS = 60_000;
/** Tasks read at once when walking an index. */
export const READ_BATCH = 8;

export const openKey = (board: string, name: string): string => `${board}.${OPEN}.${name}`;

function endName(task: Task): string {
  const ms = String(Date.parse(task.finished_at ?? task.updated_at)).padStart(15, '0');
  return `${ms}-${task.status}-${task.id}`;
}

export interface OpenEntry {
  board: string;
  name: string;
  id: string;
}

export interface EndEntry {
  board: string;
  name: string;
  id: string;
  status: TaskStatus;
}

const ENDED = /^\d+-(done|failed|cancelled)-(.+)$/;

function split(key: string, kind: string): { board: string; name: string } | null {
  const at = key.indexOf(`.${kind}.`);
  return at > 0 ? { board: key.slice(0, at), name: key.slice(at + kind.length + 2) } : null;
}

/** The open entries of `board` (every board: `*`), each board's in claim order. */
export async function openEntries(kv: SharedKv, board: string): Promise<OpenEntry[]> {
  return (await kv.keys(`${board}.${OPEN}.*`))
    .map((k) => split(k, OPEN))
    .filter((e) => e !== null)
    .map((e) => ({ ...e, id: idOfActive(e.name) }))
    .sort((a, b) => (a.board !== b.board ? (a.board < b.board ? -1 : 1) : a.name < b.name ? -1 : 1));
}

/** The end entries of `board` (every board: `*`), each board's by finish time. */
export async function endEntries(kv: SharedKv, board: string): Promise<EndEntry[]> {
  const out: EndEntry[] = [];
  for (const k of await kv.keys(`${board}.${END}.*`)) {
    const e = split(k, END);
    const m = e && ENDED.exec(e.name);
    if (e && m) out.push({ ...e, status: m[1] as TaskStatus, id: m[2]! });
  }
  return out.sort((a, b) => (a.board !== b.board ? (a.board < b.board ? -1 : 1) : a.name < b.name ? -1 : 1));
}

/** The end entry a finished task has (or would have). */
export function endEntryOf(task: Task): EndEntry {
  return { board: task.board, name: endName(task), id: task.id, status: task.status };
}

/** Whether an open entry stands for `task` as read: its own entry, and the task unfinished. */
export function entryIsLive(entry: OpenEntry, task: Task | undefined): boolean {
  return task !== undefined && !isFinished(task.status) && activeName(task) === entry.name;
}

/** A new task's open entry, made before the task itself. */
export async function openEntryFor(kv: SharedKv, task: Task): Promise<void> {
  await kv.create(openKey(task.board, activeName(task)), '');
}

/** The index work of a task just finished: its end entry, then its open entry goes. */
export async function settleFinished(kv: SharedKv, task: Task, name = activeName(task)): Promise<void> {
  await kv.create(`${task.board}.${END}.${endName(task)}`, '');
  await kv.drop(openKey(task.board, name));
}

/**
 * An open entry that stands for no unfinished task (a writer killed between two writes, or an
 * add that lost its id to another): a finished task gets its end entry and the entry goes; an
 * entry whose task never came goes once the add had time to write it.
 */
export async function repairEntry(kv: SharedKv, entry: OpenEntry, task: Task | undefined): Promise<void> {
  if (task && isFinished(task.status)) return settleFinished(kv, task, entry.name);
  const made = Number(entry.name.split('-')[1]);
  if (task || Date.now() - made > ADD_GRACE_MS) await kv.drop(openKey(entry.board, entry.name));
}

const knownIndexed = new WeakSet<SharedKv>();

/** Whether the bucket's boards carry the indexes (once seen, for the life of the process: the marker stays). */
export async function isIndexed(kv: SharedKv): Promise<boolean> {
  if (knownIndexed.has(kv)) return true;
  if (!(await kv.get(INDEXED))) return false;
  knownIndexed.add(kv);
  return true;
}

/**
 * Indexes a bucket written before the indexes (a writer's first step): every task gets the
 * entry its status calls for, then the marker is made. Writers of this version keep the
 * entries of what they write whether or not the marker is there yet, so a task changed while
 * this runs ends up with an entry too many at worst, which `claim --next` drops. A writer
 * killed midway leaves no marker, and the next one indexes again (each entry made at most once).
 */
export async function ensureIndexed(kv: SharedKv): Promise<void> {
  if (await isIndexed(kv)) return;
  const tasks = (await kv.values('*.*')).map((v) => parseTask(v.value)).filter((t): t is Task => t !== null);
  for (let i = 0; i < tasks.length; i += 64) {
    await Promise.all(
      tasks
        .slice(i, i + 64)
        .map((t) =>
          isFinished(t.status)
            ? kv.create(`${t.board}.${END}.${endName(t)}`, '')
            : kv.create(openKey(t.board, activeName(t)), ''),
        ),
    );
  }
  await kv.create(INDEXED, '1');
  knownIndexed.add(kv);
}
