import { defineConfig } from 'vitest/config';

/** The runtime bench (bench/runtime-vendors.ts): timed, so never part of `npm test`. */
export default defineConfig({
  test: {
    include: ['bench/runtime-*.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 3_600_000,
    reporters: ['default'],
  },
});
