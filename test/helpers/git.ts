import { execFileSync } from 'node:child_process';

/** This process's environment with a git identity, for tests that commit (a fresh HOME has none). */
export const GIT_IDENTITY: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};

/** `git -C cwd …` with that identity; its output as git wrote it. */
export const gitAt = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-C', cwd, ...args], { env: GIT_IDENTITY, encoding: 'utf8' });
