// The vendor CLIs as fleet agents (§13), timed, each against the fake vendor API of
// test/runtimes (real tmux, the pinned CLIs from node_modules, no network):
// - ready: spawn-agent → the CLI's first model call (its task and the fleet tools in the request);
// - idle mail: `flotilla send` returning → the model call carrying the mail (pasted notice, turn-start hook);
// - working mail: the same while a tool call runs (the turn-end hook; the call ends right after the send).
// Run by bench/runtime.mjs with vitest (it reuses the TypeScript test helpers); writes bench/results/runtimes.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'vitest';
import { claude } from '../src/runtimes/claude.js';
import { codex } from '../src/runtimes/codex.js';
import { gemini } from '../src/runtimes/gemini.js';
import type { Runtime } from '../src/runtimes/types.js';
import { eventually } from '../test/helpers/tmux.js';
import { completionsFrom } from '../test/spawn/helpers.js';
import type { Wire } from '../test/runtimes/fake-vendor.js';
import { pinnedRuntimeBinary, vendorFleet, type VendorFleet } from '../test/runtimes/helpers.js';

const RUNS = Number(process.env.BENCH_RUNTIME_RUNS ?? 3);
const DONT_ASK = 'permissions:\n  permission_mode: dont_ask\n';
const RUNTIMES: { runtime: Runtime; version: string; wire: Wire; args: string[]; env(url: string): Record<string, string> }[] = [
  { runtime: claude, version: '2.1.197', wire: 'anthropic', args: [], env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_AUTH_TOKEN: 'fake' }) },
  { runtime: codex, version: '0.169.0', wire: 'responses', args: ['--model', 'fake-responses-model'], env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'fake' }) },
  { runtime: gemini, version: '0.61.0', wire: 'gemini', args: ['--model', 'gemini-2.5-flash'], env: (url) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'fake' }) },
];

const ms = (n: number) => Math.round(n);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? NaN;
const figure = (v: number[]) => ({ median: ms(median(v)), all: v.map(ms) });

it('vendor runtime figures', async () => {
  const results: Record<string, unknown> = {};
  for (const r of RUNTIMES) {
    const open = (script: string): Promise<VendorFleet> => vendorFleet({ runtime: r.runtime, wire: r.wire, script, bin: pinnedRuntimeBinary(r.runtime.name), definitions: { a: DONT_ASK }, env: r.env });
    const ready: number[] = [];
    const idleMail: number[] = [];
    const workingMail: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const f = await open('idle.yaml');
      try {
        const t0 = performance.now();
        const id = await f.spawnChild('a', `bench-${i}`, 'get ready', r.args);
        await eventually(() => f.vendor.promptTimes.length >= 1, 300_000, 'first model call');
        ready.push(f.vendor.promptTimes[0]! - t0);
        await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1 && f.record(id).status === 'idle', 300_000, 'idle');
        // Let the CLI settle at its prompt, as a person would find it.
        await new Promise((res) => setTimeout(res, 2000));
        const before = f.vendor.promptTimes.length;
        await f.flotilla(['send', id, `wake-${i}`]);
        const sent = performance.now();
        await eventually(() => f.vendor.promptTimes.length > before, 300_000, 'woken model call');
        idleMail.push(f.vendor.promptTimes[before]! - sent);
      } finally {
        await f.dispose();
      }
      const w = await open('mail-while-working.yaml');
      try {
        const id = await w.spawnChild('a', `benchw-${i}`, 'work a while', r.args);
        await eventually(() => w.vendor.promptTimes.length >= 1, 300_000, 'first model call');
        await w.flotilla(['send', id, `ping-${i}`]);
        const sent = performance.now();
        writeFileSync(join(w.project, 'go'), '');
        await eventually(() => w.vendor.prompts.some((p) => JSON.stringify(p).includes(`ping-${i}`)), 300_000, 'model call with the mail');
        const at = w.vendor.prompts.findIndex((p) => JSON.stringify(p).includes(`ping-${i}`));
        workingMail.push(w.vendor.promptTimes[at]! - sent);
      } finally {
        await w.dispose();
      }
    }
    results[r.runtime.name] = {
      version: r.version, runs: RUNS,
      spawn_to_first_model_call_ms: figure(ready),
      mail_into_idle_cli_ms: figure(idleMail),
      mail_into_working_cli_ms: { ...figure(workingMail), note: 'send returned → the model call carrying it; includes the rest of the running tool call' },
    };
  }
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/runtimes.json', import.meta.url), JSON.stringify(results, null, 2) + '\n');
  console.log(JSON.stringify(results));
}, 3_600_000);
