import { execFile } from 'node:child_process';

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
    const child = execFile('git', [...SAFE_GIT, '-C', cwd, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...(env ? { env } : {}) }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      done({ code, stdout, stderr: err && typeof err.code === 'string' ? `${err.code}: git not found` : stderr });
    });
    // `input`: what git reads on stdin (`--stdin` forms); otherwise stdin is closed at once.
    child.stdin?.on('error', () => undefined).end(input ?? '');
  });
}

/** The first line git wrote to stderr, for a one-line error. */
export function gitWhy(r: GitResult): string {
  return r.stderr.trim().split('\n').find((l) => l.trim()) ?? `exit ${r.code}`;
}
