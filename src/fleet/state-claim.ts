import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';

/**
 * Fleet state is this machine's, never a repository's (docs/security-trust.md "Folder trust"). A
 * clone that commits `.flotilla/state/` (records of "live" agents, schedules, leases, mail)
 * would otherwise be read as if this fleet had written it. The state folder carries a mark
 * naming the folder itself (device and inode): a checkout makes a new folder, so a mark that
 * came with the files does not match. A state folder without a matching mark whose files git
 * tracks is moved aside to `<state>.leftover-<ms>` and nothing in it is used; an untracked one
 * (made here by an older Flotilla, or copied by the person) is adopted.
 */
const MARK = '.made-here';

export interface StateClaim {
  /** Where committed state was moved, when it was. */
  movedTo?: string;
}

export function claimState(layout: Pick<Layout, 'state' | 'project'>, now = Date.now()): StateClaim {
  let id: string;
  try {
    const st = statSync(layout.state);
    id = `${st.dev}:${st.ino}`;
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return {};
    throw err;
  }
  const mark = join(layout.state, MARK);
  if (readMark(mark) === id) return {};
  if (trackedByGit(layout.project, layout.state)) {
    const movedTo = `${layout.state}.leftover-${now}`;
    try {
      renameSync(layout.state, movedTo);
    } catch (err) {
      // Another process moved it first.
      if (isErrno(err, 'ENOENT')) return {};
      throw err;
    }
    return { movedTo };
  }
  writeMark(mark, id);
  return {};
}

/** Marks a state folder made here as this machine's. */
export function markState(layout: Pick<Layout, 'state'>): void {
  const st = statSync(layout.state);
  writeMark(join(layout.state, MARK), `${st.dev}:${st.ino}`);
}

function readMark(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function writeMark(path: string, id: string): void {
  try {
    writeFileSync(path, `${id}\n`);
  } catch {
    /* a read-only state folder: checked again next time */
  }
}

/** Whether git tracks any file under `dir` (no git, or not a checkout: no). */
function trackedByGit(project: string, dir: string): boolean {
  // Loaded here, in the rare case it runs: every command passes claimState at start (§14).
  const r = process
    .getBuiltinModule('node:child_process')
    .spawnSync('git', ['-C', project, 'ls-files', '-z', '--', dir], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  return r.status === 0 && r.stdout.length > 0;
}
