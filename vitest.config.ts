import { defineConfig } from 'vitest/config';

/**
 * Two tiers (README "Tests"). `unit`: logic, real temp directories and small child commands
 * (`sh`, hook commands) — no tmux, no Flotilla CLI or harness process, no crowd of fixture
 * processes; `npm run test:fast` runs only these, for the inner loop. `integration`: every
 * other file — real tmux on private sockets, the built CLI, harnesses, concurrency fixtures.
 * `npm test` runs both. A file is listed here by name (a new test file is `integration`
 * until someone lists it); test/shape/tiers.test.ts checks that no listed file uses tmux,
 * the CLI or a harness.
 */
export const UNIT_TESTS = [
  'test/audit/logger.test.ts',
  'test/chat/parse.test.ts',
  'test/chat/run.test.ts',
  'test/cli/help.test.ts',
  'test/cli/spec.test.ts',
  'test/config/load.test.ts',
  'test/definitions/fixtures.test.ts',
  'test/definitions/load.test.ts',
  'test/definitions/parse.test.ts',
  'test/fleet/agent-env.test.ts',
  'test/fleet/history-independent.test.ts',
  'test/fleet/proc.test.ts',
  'test/fleet/record-count.test.ts',
  'test/fleet/validators.test.ts',
  'test/hooks/run-command.test.ts',
  'test/hooks/tool-hooks.test.ts',
  'test/inbox/address.test.ts',
  'test/inbox/maildir.test.ts',
  'test/inbox/message-validate.test.ts',
  'test/inbox/message.test.ts',
  'test/inbox/surface.test.ts',
  'test/inbox/watch.test.ts',
  'test/loop/providers.test.ts',
  'test/loop/run-loop.test.ts',
  'test/model/resolve.test.ts',
  'test/model/scripted-model.test.ts',
  'test/outputs/follow.test.ts',
  'test/pane/format.test.ts',
  'test/pane/repl-input.test.ts',
  'test/policy/**/*.test.ts',
  'test/registry/ids.test.ts',
  'test/shape/**/*.test.ts',
  'test/sleep.test.ts',
  'test/spawn/context.test.ts',
  'test/spawn/status-view.test.ts',
  'test/tasks/board.test.ts',
  'test/tmux/pure.test.ts',
  'test/tools/glob-grep.test.ts',
  'test/tools/names-builtin.test.ts',
  'test/tools/output-capture.test.ts',
  'test/tools/read.test.ts',
  'test/tools/run-tool.test.ts',
  'test/tools/sandbox.test.ts',
  'test/tools/shell.test.ts',
  'test/tools/write-edit.test.ts',
  'test/transcript/meta-validate.test.ts',
  'test/transcript/records.test.ts',
  'test/transcript/transcript.test.ts',
  'test/up/demo.test.ts',
  'test/watch/attention.test.ts',
  'test/watch/gather.test.ts',
  'test/watch/key-decoder.test.ts',
  'test/watch/loop.test.ts',
  'test/watch/rows.test.ts',
  'test/watch/view.test.ts',
  // Policy decides without I/O: every test of it is a unit test.
];

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
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: UNIT_TESTS } },
    ],
  },
});
