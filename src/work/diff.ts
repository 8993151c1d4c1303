import { isAbsolute, relative } from 'node:path';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { FlotillaError } from '../errors.js';
import { git, gitWhy } from './git.js';
import { agentWork } from './work.js';

/** One changed file: lines added and deleted (null for a binary file). */
export interface FileChange {
  path: string;
  added: number | null;
  deleted: number | null;
}

/**
 * `flotilla diff <id>` (docs/design.md §12): a worktree agent's branch against the commit its
 * worktree was made from — what it committed, whatever the base branch did since (so too an
 * in-place agent's branch once it has committed); else an in-place agent's uncommitted changes
 * in its checkout (the person's own changes there among them).
 */
export interface WorkDiff {
  id: string;
  kind: 'branch' | 'in-place';
  /** `flotilla/<id>`, or null in place. */
  branch: string | null;
  /** The commit compared against: the worktree's base, or the checkout's HEAD. */
  from: string;
  files: FileChange[];
  /** Files not in git yet (in place only: a worktree agent's are in `uncommitted`). */
  untracked: string[];
  /** A worktree agent's changed files not committed (not in the diff). */
  uncommitted: number;
  /** git's patch, or its `--stat` summary with `stat`. */
  text: string;
}

export async function agentDiff(layout: Layout, rec: AgentRecord, opts: { stat?: boolean } = {}): Promise<WorkDiff> {
  const work = await agentWork(layout, rec);
  const format = opts.stat ? ['--stat'] : ['--patch'];
  // An in-place agent that committed nothing: its work is the checkout's uncommitted changes.
  if (work.kind === 'branch' && !(work.checkout && !(await committed(layout, work.branch, work.base.commit)))) {
    const range = [work.base.commit, work.branch];
    const [num, text] = await Promise.all([
      git(layout.project, ['diff', '--numstat', '-z', ...range]),
      git(layout.project, ['diff', ...format, ...range]),
    ]);
    if (num.code !== 0)
      throw new FlotillaError(
        `cannot diff ${work.branch} against ${work.base.commit.slice(0, 12)}: ${gitWhy(num)} — is the branch still there? (git branch --list 'flotilla/*')`,
        { code: 'diff' },
      );
    return {
      id: rec.id,
      kind: 'branch',
      branch: work.branch,
      from: work.base.commit,
      files: numstat(num.stdout),
      untracked: [],
      uncommitted: work.uncommitted,
      text: text.stdout,
    };
  }
  const cwd = work.kind === 'branch' ? work.checkout! : work.cwd;
  const head = await git(cwd, ['rev-parse', '--verify', '-q', 'HEAD']);
  if (head.code !== 0)
    throw new FlotillaError(
      `${rec.id} worked in place in ${cwd}, which is not a git checkout with a commit — nothing to diff against`,
      { code: 'diff' },
    );
  // The fleet root is Flotilla's, not the agent's work.
  const root = relative(cwd, layout.root);
  const paths = root && !root.startsWith('..') && !isAbsolute(root) ? ['--', '.', `:(exclude)${root}`] : [];
  const [num, text, others] = await Promise.all([
    git(cwd, ['diff', '--numstat', '-z', 'HEAD', ...paths]),
    git(cwd, ['diff', ...format, 'HEAD', ...paths]),
    git(cwd, ['ls-files', '--others', '--exclude-standard', '-z', ...paths]),
  ]);
  return {
    id: rec.id,
    kind: 'in-place',
    branch: null,
    from: head.stdout.trim(),
    files: numstat(num.stdout),
    untracked: others.stdout.split('\0').filter(Boolean),
    uncommitted: 0,
    text: text.stdout,
  };
}

/** Whether `branch` has moved from the commit it was made at (false when it is gone). */
async function committed(layout: Layout, branch: string, base: string): Promise<boolean> {
  const tip = await git(layout.project, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`]);
  return tip.code === 0 && tip.stdout.trim() !== base;
}

/** `git diff --numstat -z`: `added\tdeleted\tpath\0`, or `\t\0old\0new\0` for a rename. */
export function numstat(out: string): FileChange[] {
  const parts = out.split('\0');
  const files: FileChange[] = [];
  for (let i = 0; i < parts.length; i++) {
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(parts[i]!);
    if (!m) continue;
    // A rename: the path field is empty and the old and new paths follow.
    const path = m[3] === '' ? parts[(i += 2)]! : m[3]!;
    files.push({ path, added: m[1] === '-' ? null : Number(m[1]), deleted: m[2] === '-' ? null : Number(m[2]) });
  }
  return files;
}
