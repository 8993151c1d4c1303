import { gemini } from '../../src/runtimes/gemini.js';
import { pinnedRuntimeBinary } from './helpers.js';
import { runtimeSuite } from './suite.js';

// Gemini CLI 0.61.0 (the pinned devDependency) against a fake Gemini API (GOOGLE_GEMINI_BASE_URL).
runtimeSuite({
  runtime: gemini,
  wire: 'gemini',
  bin: pinnedRuntimeBinary('gemini'),
  // A named model: Gemini's "auto" router would first ask a small model which one to use.
  spawnArgs: ['--model', 'gemini-2.5-flash'],
  env: (url) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'fake-key-for-a-local-server' }),
});
