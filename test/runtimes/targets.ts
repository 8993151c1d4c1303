import { claude } from '../../src/runtimes/claude.js';
import { codex } from '../../src/runtimes/codex.js';
import { gemini } from '../../src/runtimes/gemini.js';
import type { Runtime } from '../../src/runtimes/types.js';
import type { Wire } from './fake-vendor.js';
import { pinnedRuntimeBinary } from './helpers.js';

/**
 * Each vendor CLI as a person starts it with an API key in the environment (the documented way
 * in), pointed at the fake server: the key variable itself, so any dialog the CLI shows for a
 * key stands in the test's way as it would in the person's.
 */
export interface Target {
  runtime: Runtime;
  wire: Wire;
  bin: string;
  /** The spawner's environment: an API key and the fake server's address. */
  env(url: string): Record<string, string>;
  /** Extra spawn-agent arguments (a model the fake server can speak for). */
  spawnArgs: string[];
}

export const TARGETS: Record<'claude' | 'codex' | 'gemini', () => Target> = {
  claude: () => ({
    runtime: claude,
    wire: 'anthropic',
    bin: pinnedRuntimeBinary('claude'),
    spawnArgs: [],
    env: (url) => ({
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: 'sk-ant-api03-fake-key-for-a-local-server-0123456789',
    }),
  }),
  codex: () => ({
    runtime: codex,
    wire: 'responses',
    bin: pinnedRuntimeBinary('codex'),
    // A model Codex has no metadata for gets plain function tools (its own models get a JavaScript "code mode" tool).
    spawnArgs: ['--model', 'fake-responses-model'],
    env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-fake-key-for-a-local-server' }),
  }),
  gemini: () => ({
    runtime: gemini,
    wire: 'gemini',
    bin: pinnedRuntimeBinary('gemini'),
    // A named model: Gemini's "auto" router would first ask a small model which one to use.
    spawnArgs: ['--model', 'gemini-2.5-flash'],
    env: (url) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'fake-key-for-a-local-server' }),
  }),
};
