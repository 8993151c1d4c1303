import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Each outside tool the tests run, and the Debian package that gives it. README.md's install
 * line and .ci/run install exactly these packages (test/shape/test-packages.test.ts keeps the
 * three in step).
 */
export const TEST_TOOLS = {
  tmux: 'tmux',
  git: 'git',
  bwrap: 'bubblewrap',
  dash: 'dash',
  mawk: 'mawk',
  gawk: 'gawk',
  sshd: 'openssh-server',
  ssh: 'openssh-client',
  'nats-server': 'nats-server',
  openssl: 'openssl',
  perl: 'perl-base',
} as const;

export type TestTool = keyof typeof TEST_TOOLS;

/** Where a tool is looked for besides PATH: sshd lives in /usr/sbin, often off a user's PATH. */
const EXTRA_DIRS: Partial<Record<TestTool, string>> = { sshd: '/usr/sbin' };

/**
 * The tool's absolute path; throws one line naming the package to install when it is missing,
 * so a newcomer's run fails saying what to do instead of with a spawn ENOENT deep in a helper.
 */
export function requireTool(tool: TestTool): string {
  const dirs = [
    ...(process.env.PATH ?? '').split(delimiter).filter(Boolean),
    ...(EXTRA_DIRS[tool] ? [EXTRA_DIRS[tool]] : []),
  ];
  for (const dir of dirs) {
    const path = join(dir, tool);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // Not in this folder.
    }
  }
  throw new Error(
    `${tool} is not installed: this test needs it — sudo apt-get install -y ${TEST_TOOLS[tool]} (README.md, "Requirements")`,
  );
}
