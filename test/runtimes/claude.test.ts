import { claude } from '../../src/runtimes/claude.js';
import { pinnedRuntimeBinary } from './helpers.js';
import { runtimeSuite } from './suite.js';

// Claude Code 2.1.197 (the pinned devDependency) against a fake Anthropic API.
runtimeSuite({
  runtime: claude,
  wire: 'anthropic',
  bin: pinnedRuntimeBinary('claude'),
  env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_AUTH_TOKEN: 'fake-token-for-a-local-server' }),
});
