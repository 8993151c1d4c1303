import { defineConfig } from 'vitest/config';

/**
 * Two tiers (test/README.md), told apart by a rule, not a list. `unit`: a file named
 * `*.unit.test.ts`, and every test in `test/policy/` (policy decides without I/O) and
 * `test/shape/` (checks on the code itself) — logic, real temp directories and small child
 * commands (`sh`, hook commands); no tmux, no Flotilla CLI or harness process, no crowd of
 * fixture processes. `npm run test:fast` runs only these, for the inner loop. `integration`:
 * every other `*.test.ts` — real tmux on private sockets, the built CLI, harnesses,
 * concurrency fixtures. test/shape/tiers.test.ts checks that no unit file uses tmux, the CLI
 * or a harness.
 */
export const UNIT_TESTS = ['test/**/*.unit.test.ts', 'test/policy/**/*.test.ts', 'test/shape/**/*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // Two cores: tmux and process tests are heavy, so run two files at a time.
    maxWorkers: 2,
    // Generous: a test's timeout only bounds a failure; a loaded 2-core machine is slow.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT_TESTS } },
      {
        extends: true,
        // Integration tests run the built CLI (dist/): rebuild first when a source is newer,
        // so `npx vitest run <file>` never tests a stale build.
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: UNIT_TESTS,
          globalSetup: ['test/helpers/build-if-stale.ts'],
        },
      },
    ],
  },
});
