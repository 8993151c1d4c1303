import { defineConfig } from 'vitest/config';

/** `npm run test:corpus`: the opt-in corpus run (test/README.md); `npm test` never reads it. */
export default defineConfig({
  test: { include: ['test/corpus/*.corpus.ts'], testTimeout: 120_000, hookTimeout: 120_000 },
});
