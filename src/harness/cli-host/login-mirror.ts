import {
  chmodSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
  type FSWatcher,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * The person's shared login for a vendor CLI in Flotilla's sandbox (docs/decisions.md, "A
 * refreshed login is written back by the shim"). Each CLI replaces its login file when it
 * refreshes a token — a new file beside it, renamed over it (Codex, Claude Code) — so it needs
 * a writable folder around that file, and the person's login folder (settings, hooks that run
 * on the host) must stay read-only. The CLI gets this folder instead, hidden from every other
 * agent, holding a copy of the person's file; the shim, on the host, keeps the two in step
 * while the CLI runs: a token the CLI refreshes lands in the person's own file at once, and
 * one refreshed meanwhile by another agent or by the person reaches this CLI before it next
 * needs one. The copy is removed when the CLI ends.
 */
export interface LoginMirror {
  /** The copy the CLI uses, named as the person's file. */
  file: string;
  /** The folder around it: writable in the CLI's sandbox. */
  dir: string;
  /** Brings the two files in step now (the watchers call it on every change). */
  sync(): void;
  /** A last sync, then the copy is gone. */
  close(): void;
}

export function mirrorLogin(person: string, dir: string, log?: { warn(o: object, m: string): void }): LoginMirror {
  const file = join(dir, basename(person));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let last = readLogin(person);
  if (last === undefined) throw new Error(`cannot read the login file ${person}`);
  replace(file, last);

  function sync(): void {
    const mine = readLogin(file);
    const theirs = readLogin(person);
    try {
      // The CLI refreshed: its new token goes to the person's file (where it leads, if a link).
      if (
        mine !== undefined &&
        mine !== last &&
        mine !== theirs &&
        (theirs === last || theirs === undefined || newer(file, person))
      ) {
        replace(realTarget(person), mine);
        last = mine;
      } else if (theirs !== undefined && theirs !== last && theirs !== mine) {
        // Another agent or the person refreshed (or signed in again): this CLI reads theirs next.
        replace(file, theirs);
        last = theirs;
      } else if (mine !== undefined && mine === theirs) {
        last = mine;
      }
    } catch (err) {
      log?.warn({ err: String(err) }, `could not bring the shared login ${person} in step with the agent's copy`);
    }
  }

  // The folders are watched, not the files: each is replaced, not rewritten, by a refresh.
  const watchers: FSWatcher[] = [];
  for (const [folder, name] of [
    [dir, basename(file)],
    [dirname(realTarget(person)), basename(realTarget(person))],
  ] as const) {
    try {
      watchers.push(
        watch(folder, { persistent: false }, (_event, changed) => {
          if (!changed || changed === name) sync();
        }),
      );
    } catch (err) {
      log?.warn(
        { err: String(err) },
        `cannot watch ${folder}: a refreshed token is written back only when the agent ends`,
      );
    }
  }

  return {
    file,
    dir,
    sync,
    close() {
      for (const w of watchers) w.close();
      sync();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The file's text when it holds a whole JSON document (a file being written in place may not yet). */
function readLogin(path: string): string | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    JSON.parse(text);
    return text;
  } catch {
    return undefined;
  }
}

function newer(a: string, b: string): boolean {
  try {
    return statSync(a).mtimeMs >= statSync(b).mtimeMs;
  } catch {
    return true;
  }
}

function realTarget(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Written whole beside the file and renamed over it, readable by its owner only: a reader never sees half a token. */
function replace(path: string, text: string): void {
  const tmp = join(dirname(path), `.${basename(path)}.flotilla-${process.pid}`);
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
