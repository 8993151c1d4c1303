import { codex } from '../../src/runtimes/codex.js';
import { pinnedRuntimeBinary } from './helpers.js';
import { runtimeSuite } from './suite.js';

// Codex 0.169.0 (the pinned devDependency) against a fake Responses API: OPENAI_BASE_URL
// becomes a `[model_providers.flotilla]` entry with wire_api = "responses" in the agent's CODEX_HOME.
runtimeSuite({
  runtime: codex,
  wire: 'responses',
  bin: pinnedRuntimeBinary('codex'),
  // A model Codex has no metadata for gets plain function tools (its own models get a JavaScript "code mode" tool).
  spawnArgs: ['--model', 'fake-responses-model'],
  env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'fake-key-for-a-local-server' }),
});
