// The vendor CLIs as fleet agents (§13), timed, each against the fake vendor API of
// test/runtimes (real tmux, the pinned CLIs from node_modules, no network):
// - ready: spawn-agent → the CLI's first model call (its task and the fleet tools in the request);
// - idle mail: `flotilla send` returning → the model call carrying the mail (pasted notice, turn-start hook);
// - working mail: mail sent while a 5 s shell command runs; from the command's end (it writes
//   the time) → the model call carrying the mail (the task's answer, then the turn-end hook's hand-over);
// - RSS of the shim and of the CLI (and of everything under the shim: the CLI's `flotilla mcp`
//   and helpers), with the agent idle after its first task.
// Run by bench/runtime.mjs with vitest (it reuses the TypeScript test helpers); writes bench/results/runtimes.json.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

const RUNS = Number(process.env.BENCH_RUNTIME_RUNS ?? 10);
const DONT_ASK = 'permissions:\n  permission_mode: dont_ask\n';
const RUNTIMES: { runtime: Runtime; version: string; wire: Wire; args: string[]; env(url: string): Record<string, string> }[] = [
  { runtime: claude, version: '2.1.197', wire: 'anthropic', args: [], env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_AUTH_TOKEN: 'fake' }) },
  { runtime: codex, version: '0.169.0', wire: 'responses', args: ['--model', 'fake-responses-model'], env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'fake' }) },
  { runtime: gemini, version: '0.61.0', wire: 'gemini', args: ['--model', 'gemini-2.5-flash'], env: (url) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'fake' }) },
];

const ms = (n: number) => Math.round(n);

/** Resident memory of one process, in MB. */
function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** `pid` and every process below it. */
function tree(pid: number): number[] {
  const kids = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(name)]);
    } catch { /* gone */ }
  }
  const out: number[] = [];
  const walk = (p: number): void => { out.push(p); for (const k of kids.get(p) ?? []) walk(k); };
  walk(pid);
  return out;
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? NaN;
const figure = (v: number[]) => ({ median: ms(median(v)), all: v.map(ms) });
const mb = (v: number[]) => ({ median: Math.round(median(v) * 10) / 10, all: v.map((x) => Math.round(x * 10) / 10) });

it('vendor runtime figures', async () => {
  const results: Record<string, unknown> = {};
  for (const r of RUNTIMES) {
    const open = (script: string): Promise<VendorFleet> => vendorFleet({ runtime: r.runtime, wire: r.wire, script, bin: pinnedRuntimeBinary(r.runtime.name), definitions: { a: DONT_ASK }, env: r.env });
    const ready: number[] = [];
    const idleMail: number[] = [];
    const workingMail: number[] = [];
    const shimRss: number[] = [];
    const cliRss: number[] = [];
    const treeRss: number[] = [];
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
        const shim = f.record(id).pid!;
        const cli = f.cliPid(id);
        shimRss.push(rssMb(shim));
        if (cli) cliRss.push(rssMb(cli));
        treeRss.push(tree(shim).reduce((sum, p) => sum + rssMb(p), 0));
        const before = f.vendor.promptTimes.length;
        await f.flotilla(['send', id, `wake-${i}`]);
        const sent = performance.now();
        await eventually(() => f.vendor.promptTimes.length > before, 300_000, 'woken model call');
        idleMail.push(f.vendor.promptTimes[before]! - sent);
      } finally {
        await f.dispose();
      }
      const w = await open('bench-working.yaml');
      try {
        const id = await w.spawnChild('a', `benchw-${i}`, 'work a while', r.args);
        await eventually(() => w.vendor.promptTimes.length >= 1, 300_000, 'first model call');
        await w.flotilla(['send', id, `ping-${i}`]);
        const sent = performance.timeOrigin + performance.now();
        const doneFile = join(w.project, 'work-done');
        await eventually(() => w.vendor.prompts.some((p) => JSON.stringify(p).includes(`ping-${i}`)), 300_000, 'model call with the mail');
        const at = w.vendor.prompts.findIndex((p) => JSON.stringify(p).includes(`ping-${i}`));
        const workEnded = existsSync(doneFile) ? Number(readFileSync(doneFile, 'utf8').trim()) : NaN;
        // Only a send that returned while the command still ran measures a working CLI.
        if (workEnded > sent) workingMail.push(performance.timeOrigin + w.vendor.promptTimes[at]! - workEnded);
      } finally {
        await w.dispose();
      }
    }
    results[r.runtime.name] = {
      version: r.version, runs: RUNS,
      spawn_to_first_model_call_ms: figure(ready),
      mail_into_idle_cli_ms: figure(idleMail),
      mail_into_working_cli_ms: { ...figure(workingMail), note: "mail sent while a shell command ran; the command's end → the model call carrying it (the task's answer call and the turn-end hook between)" },
      rss_mb: { shim: mb(shimRss), cli: mb(cliRss), shim_and_everything_below: mb(treeRss) },
    };
  }
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/runtimes.json', import.meta.url), JSON.stringify(results, null, 2) + '\n');
  console.log(JSON.stringify(results));
}, 3_600_000);
