import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/**
 * Flotilla's own git calls run no hook and no fsmonitor (docs/security.md): an agent that
 * could write the repository's git dir must not get code run by the harness through it.
 */
export const SAFE_GIT = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false'] as const;

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * git on the host for an agent's work: no hook and no fsmonitor (`SAFE_GIT`), so nothing an
 * agent wrote runs here (docs/security.md, "Commits in the sandbox"). Never throws.
 */
export function git(cwd: string, args: readonly string[], env?: NodeJS.ProcessEnv, input?: string): Promise<GitResult> {
  return new Promise((done) => {
    const child = execFile(
      'git',
      [...SAFE_GIT, '-C', cwd, ...args],
      { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...(env ? { env } : {}) },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr: err && typeof err.code === 'string' ? `${err.code}: git not found` : stderr });
      },
    );
    // `input`: what git reads on stdin (`--stdin` forms); otherwise stdin is closed at once.
    child.stdin?.on('error', () => undefined).end(input ?? '');
  });
}

/**
 * `GIT_ALTERNATE_OBJECT_DIRECTORIES` naming `dirs`. git splits the list at `:`; an entry that
 * starts with `"` is read as a C-quoted path, so a folder whose path holds `:` (a project in
 * `~/work/a:b`) or starts with `"` is written quoted, and the rest as they are.
 */
export function alternateObjects(dirs: readonly string[]): { GIT_ALTERNATE_OBJECT_DIRECTORIES: string } {
  const entry = (d: string) =>
    /[:"\\\n]/.test(d) ? `"${d.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n')}"` : d;
  return { GIT_ALTERNATE_OBJECT_DIRECTORIES: dirs.map(entry).join(':') };
}

/** The first line git wrote to stderr, for a one-line error. */
export function gitWhy(r: GitResult): string {
  return (
    r.stderr
      .trim()
      .split('\n')
      .find((l) => l.trim()) ?? `exit ${r.code}`
  );
}

/**
 * The same git command in each of `cwds` (a `git status` per worktree for `review`), run by a
 * few `sh` processes instead of one child of Node's each: Node forks its whole process for a
 * child, which for fifty short git calls costs more than the calls (docs/benchmarks-work.md).
 * Results in the order of `cwds`; each cwd is an argument, never part of the script.
 */
export async function gitEach(cwds: readonly string[], args: readonly string[], shells = 2): Promise<GitResult[]> {
  if (cwds.length === 0) return [];
  const mark = `--flotilla-${randomBytes(8).toString('hex')}--`;
  const quoted = [...SAFE_GIT, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const script = `for w do git -C "$w" ${quoted} 2>/dev/null; printf '%s %d\\n' '${mark}' $?; done`;
  const per = Math.ceil(cwds.length / Math.max(1, shells));
  const chunks = Array.from({ length: Math.ceil(cwds.length / per) }, (_, k) => cwds.slice(k * per, (k + 1) * per));
  const ran = await Promise.all(
    chunks.map(
      (chunk) =>
        new Promise<GitResult[]>((done) => {
          const child = execFile(
            'sh',
            ['-c', script, 'sh', ...chunk],
            { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
            (_err, stdout) => {
              // [out, code, out, code, …, '']; a shell that died early leaves the rest of its cwds failed.
              const parts = stdout.split(new RegExp(`${mark} (\\d+)\\n`));
              done(
                chunk.map((_, k) =>
                  k * 2 + 1 < parts.length
                    ? { code: Number(parts[k * 2 + 1]), stdout: parts[k * 2]!, stderr: '' }
                    : { code: 1, stdout: '', stderr: 'not run' },
                ),
              );
            },
          );
          child.stdin?.on('error', () => undefined).end();
        }),
    ),
  );
  return ran.flat();
}
