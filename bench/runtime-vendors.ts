// The vendor CLIs as fleet agents (§13), timed, each against the fake vendor API of
// test/runtimes (real tmux, the pinned CLIs from node_modules, no network):
// - ready: spawn-agent → the CLI's first model call (its task and the fleet tools in the request),
//   beside the bare CLI started the same way in the same run (interactive in a tmux pane, the
//   task on its command line, the same pinned binary, a fake API of the same kind, a fresh home
//   as a person's is after the CLI's first run), each run's ratio, and where that time goes
//   (FLOTILLA_TRACE spans, src/trace.ts); then a second start in the same run: the bare CLI again in
//   the home its first start made, and a second agent spawned into the fleet (its caches warm);
// - idle mail: `flotilla send` returning → the model call carrying the mail (pasted notice, turn-start hook), and
//   from the send called (the send's own run included: what a person waits from Enter in their shell),
//   span by span (the shim's marks: mail seen, pasted, Enter, its door asked for the hook; the hook's answer);
// - working mail: mail sent while a 5 s shell command runs; from the command's end (it writes
//   the time) → the model call carrying the mail (the task's answer, then the turn-end hook's hand-over);
// - RSS of the agent's pane process (tools/shim-pane, the CLI's parent: its record's pid), of the shim host (which runs
//   every vendor agent's shim: it serves the CLI's fleet MCP server) with one agent and with two (what one more vendor
//   agent costs it), and of the CLI (and of everything under the pane process: the CLI's door-pipe and helpers), with
//   the agent idle after its first task, beside an idle `node -e` timer's; and in the first BENCH_RUNTIME_SETTLED runs
//   (default 3) the host's again once it has been idle 30 s, after V8's memory reducer has run (it starts ~8 s after
//   the last collection of a process that stopped allocating).
// Run by bench/runtime.mjs with vitest (it reuses the TypeScript test helpers); writes bench/results/runtimes.json.
// `npm run bench -- runtimes` runs only this and prints a table (bench/runtime.mjs). BENCH_RUNTIME_RUNS
// (default 10), BENCH_RUNTIME_ONLY=claude,codex (default all three), BENCH_RUNTIME_WORKING=0 (skip
// the working-mail figure, the slowest), BENCH_RUNTIME_CA (below).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { execa } from 'execa';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'vitest';
import { shimHosts } from '../src/fleet/shim-hosts.js';
import { claude } from '../src/runtimes/claude.js';
import { codex } from '../src/runtimes/codex.js';
import { gemini } from '../src/runtimes/gemini.js';
import type { Runtime } from '../src/runtimes/types.js';
import { eventually } from '../test/helpers/tmux.js';
import { completionsFrom } from '../test/spawn/helpers.js';
import type { Wire } from '../test/runtimes/fake-vendor.js';
import { startFakeVendor, namingFor } from '../test/runtimes/fake-vendor.js';
import { pinnedRuntimeBinary, RUNTIME_FIXTURES, vendorFleet, type VendorFleet } from '../test/runtimes/helpers.js';
import { testHome, type TestHome } from '../test/helpers/home.js';

const RUNS = Number(process.env.BENCH_RUNTIME_RUNS ?? 10);
const ONLY = (process.env.BENCH_RUNTIME_ONLY ?? '').split(',').filter(Boolean);
const WORKING = process.env.BENCH_RUNTIME_WORKING !== '0';
const SETTLED = Number(process.env.BENCH_RUNTIME_SETTLED ?? 3);
const SETTLED_MS = 30_000;
// BENCH_RUNTIME_CA=<pem file>: the person's shell exports NODE_EXTRA_CA_CERTS (a proxy's CA), for the bare CLI and the
// fleet alike.
const CA = process.env.BENCH_RUNTIME_CA;
const DONT_ASK = 'permissions:\n  permission_mode: dont_ask\n';
/**
 * `bare(prompt)`: the CLI started the way the fleet starts it — interactive, in a tmux pane, its
 * first task given as the fleet gives it (Claude and Codex: the prompt after `--`; Gemini:
 * `--prompt-interactive`) — as a person runs it without Flotilla. `person(home, project, url)`
 * writes what that person's home holds after the CLI's own first run with a key: onboarding
 * done, the project trusted, the fake API as the endpoint (Codex: a Responses provider over
 * HTTP, as the fleet gives it; with OPENAI_BASE_URL alone it first tries a WebSocket the fake
 * does not serve), and the same quieting the fleet gives its CLI (no update check, no
 * telemetry, no self-relaunch), so the gap measured is Flotilla's work, not the network's.
 */
interface Bench {
  runtime: Runtime;
  version: string;
  wire: Wire;
  args: string[];
  bare(prompt: string): string[];
  env(url: string): Record<string, string>;
  /** What the bare CLI's environment adds (the fleet's quieting variables for its CLI). */
  bareEnv: Record<string, string>;
  person(home: string, project: string, url: string): void;
}
const writeIn = (home: string, path: string, text: string) => {
  mkdirSync(dirname(join(home, path)), { recursive: true });
  writeFileSync(join(home, path), text);
};
const ALL: Bench[] = [
  {
    runtime: claude,
    version: '2.1.197',
    wire: 'anthropic',
    args: [],
    bare: (p) => ['--', p],
    env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_AUTH_TOKEN: 'fake' }),
    // src/runtimes/claude.ts's QUIET_ENV less MCP_CONNECTION_NONBLOCKING (the bare CLI has no MCP server).
    bareEnv: {
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_BUG_COMMAND: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
      CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
    },
    person: (home, project) =>
      writeIn(
        home,
        '.claude.json',
        JSON.stringify({
          hasCompletedOnboarding: true,
          projects: { [project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
        }),
      ),
  },
  {
    runtime: codex,
    version: '0.169.0',
    wire: 'responses',
    args: ['--model', 'fake-responses-model'],
    // --no-daemon as the fleet gives it: by default Codex first starts (or joins) a shared
    // background server, ~3 s more at load ~10, which the fleet's CLI never pays.
    bare: (p) => ['--no-daemon', '--model', 'fake-responses-model', '--', p],
    env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'fake' }),
    bareEnv: {},
    person: (home, project, url) =>
      writeIn(
        home,
        '.codex/config.toml',
        [
          'model_provider = "fake"',
          'check_for_update_on_startup = false',
          '[analytics]',
          'enabled = false',
          '[feedback]',
          'enabled = false',
          `[projects.${JSON.stringify(project)}]`,
          'trust_level = "trusted"',
          '[model_providers.fake]',
          'name = "fake"',
          `base_url = "${url}/v1"`,
          'wire_api = "responses"',
          'env_key = "OPENAI_API_KEY"',
          '',
        ].join('\n'),
      ),
  },
  {
    runtime: gemini,
    version: '0.61.0',
    wire: 'gemini',
    args: ['--model', 'gemini-2.5-flash'],
    bare: (p) => ['--skip-trust', '--model', 'gemini-2.5-flash', '--prompt-interactive', p],
    env: (url) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'fake' }),
    bareEnv: { GEMINI_CLI_NO_RELAUNCH: 'true' },
    // Gemini's first run asks how to log in; with a key in the environment a person picks "Gemini API key".
    person: (home) =>
      writeIn(
        home,
        '.gemini/settings.json',
        JSON.stringify({
          general: { disableAutoUpdate: true, disableUpdateNag: true },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          security: { auth: { selectedType: 'gemini-api-key' } },
        }),
      ),
  },
];
const RUNTIMES = ALL.filter((r) => !ONLY.length || ONLY.includes(r.runtime.name)).map((r) =>
  CA ? { ...r, env: (url: string) => ({ ...r.env(url), NODE_EXTRA_CA_CERTS: CA }) } : r,
);

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

/**
 * The shim's memory three ways: resident (VmRSS, what `ps` shows), its private part (RssAnon:
 * heap, stacks; the rest of VmRSS is Node's own code, mapped from the binary and shared by every
 * node process) and its proportional share (Pss: shared pages divided among their sharers).
 */
function memoryMb(pid: number): { rss: number; anon: number; pss: number } {
  const kb = (text: string, field: string) =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN) / 1024;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return { rss: kb(status, 'VmRSS'), anon: kb(status, 'RssAnon'), pss: kb(rollup, 'Pss') };
  } catch {
    return { rss: NaN, anon: NaN, pss: NaN };
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
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    out.push(p);
    for (const k of kids.get(p) ?? []) walk(k);
  };
  walk(pid);
  return out;
}
/** Nearest-rank percentile: p50 of an even count is the upper of the middle two, p95 of 10 runs the slowest. */
const pct = (v: number[], p: number) =>
  [...v].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * v.length) - 1)] ?? NaN;
const figure = (v: number[]) => ({ p50: ms(pct(v, 50)), p95: ms(pct(v, 95)), all: v.map(ms) });
const tenth = (x: number) => Math.round(x * 10) / 10;
const hundredth = (x: number) => Math.round(x * 100) / 100;
const ratios = (v: number[]) => ({ p50: hundredth(pct(v, 50)), p95: hundredth(pct(v, 95)), all: v.map(hundredth) });
const mb = (v: number[]) => ({ p50: tenth(pct(v, 50)), p95: tenth(pct(v, 95)), all: v.map(tenth) });

/**
 * The spans of one spawn, from the marks of src/trace.ts (each line also says when its
 * process started) and the bench's own two: the spawn-agent call and the first model request.
 */
const SPANS: [label: string, from: string, to: string][] = [
  ['spawn-agent: node starts', 'bench: spawn-agent called', 'spawn: process started'],
  ['spawn-agent: CLI modules load', 'spawn: process started', 'spawn: command runs'],
  ['spawn-agent: config read (trust asked)', 'spawn: command runs', 'spawn: config read'],
  ['spawn-agent: dead agents reconciled', 'spawn: config read', 'spawn: fleet reconciled'],
  ['spawn-agent: tmux version checked', 'spawn: fleet reconciled', 'spawn: tmux checked'],
  ['spawn-agent: spawn prepared (definition, record, slot)', 'spawn: tmux checked', 'spawn: prepared'],
  ['spawn-agent: keys and env files written', 'spawn: prepared', 'spawn: opening window'],
  ['tmux new-window returns', 'spawn: opening window', 'spawn: window open'],
  ['tmux starts the harness node', 'spawn: opening window', 'harness: process started'],
  // A vendor agent's pane runs tools/shim-pane, which hands it to the fleet's shim host (src/shim-host/).
  ['tmux starts the pane, which reaches the shim host', 'spawn: opening window', 'shim host: pane connected'],
  ['shim host: config read', 'shim host: pane connected', 'harness: start'],
  ['harness: modules load', 'harness: process started', 'harness: start'],
  ['harness: admitted (slot handoff)', 'harness: start', 'harness: admitted'],
  ['harness: definitions, shim loads', 'harness: admitted', 'shim: start'],
  ['shim: record, logger, login, binary', 'shim: start', 'shim: login and binary checked'],
  ['shim: CLI version and model catalogue', 'shim: login and binary checked', 'shim: version and catalogue known'],
  ['shim: CLI settings written', 'shim: version and catalogue known', 'shim: CLI settings written'],
  ['shim: sandbox planned, door opened', 'shim: CLI settings written', 'shim: sandbox planned, door open'],
  ["shim: bwrap made the sandbox, CLI exec'd", 'shim: sandbox planned, door open', 'shim: CLI started'],
  ['CLI: start → first model request', 'shim: CLI started', 'first model request'],
  // Within the CLI's start: its fleet MCP server (served by the shim itself; from the sandbox through the door) and its
  // turn-start hook.
  ['  CLI starts its MCP client (tools/door-pipe reaches the door)', 'shim: CLI started', 'shim: mcp joined'],
  ['  the shim serves it (its modules loaded as the CLI started)', 'shim: mcp joined', 'mcp: serving'],
  ['  MCP server serving → CLI initialized it', 'mcp: serving', 'mcp: client initialized'],
  ['    serving → the CLI asks to initialize (its own start goes on)', 'mcp: serving', 'mcp: initialize asked'],
  // From the CLI's MCP handshake to its hook command (tools/door-hook) reaching the door, answered in the shim.
  ['  MCP initialized → turn-start hook reaches the door', 'mcp: client initialized', 'shim: turn-start hook asked'],
  // Claude (Runtime.firstTurnWaitsForMcp): its SessionStart hook, answered by the shim once its MCP server has
  // answered tools/list and then Claude its ping, holds the task on its command line; then Claude takes the task and
  // runs its turn-start hook.
  ['  MCP initialized → tools listed', 'mcp: client initialized', 'mcp: tools listed'],
  ['  tools listed → the CLI answered the ping', 'mcp: tools listed', 'mcp: ping answered'],
  ['  ping answered → session-start hook answered', 'mcp: ping answered', 'shim: session-start hook answered'],
  [
    '  session-start answered → turn-start hook reaches the door',
    'shim: session-start hook answered',
    'shim: turn-start hook asked',
  ],
  ['  turn-start hook: the shim answers it', 'shim: turn-start hook asked', 'shim: turn-start hook answered'],
  ['  turn-start hook answered → first model request', 'shim: turn-start hook answered', 'first model request'],
  ['spawn-agent returns (after the slot handoff)', 'bench: spawn-agent called', 'spawn: slot handed over'],
];

/**
 * Where an idle CLI's mail time goes: the same marks, from `flotilla send` called until the
 * model request carrying the notice (the first of each mark after the send was called).
 */
const MAIL_SPANS: [label: string, from: string, to: string][] = [
  ['flotilla send runs (to its exit)', 'bench: send called', 'bench: send returned'],
  ['send called → the shim sees the mail (inotify)', 'bench: send called', 'shim: mail seen'],
  ['shim: record, unread count, notice pasted (tmux)', 'shim: mail seen', 'shim: pasted'],
  ['shim: pane shows the paste → Enter pressed', 'shim: pasted', 'shim: Enter pressed'],
  ['  notice pasted → the pane shows it', 'shim: pasted', 'shim: paste shown'],
  ["  the pane shows it → Enter pressed (the CLI's paste guard)", 'shim: paste shown', 'shim: Enter pressed'],
  // Only in the runs where the CLI still took the Enter as a newline (typist.ts undoes it and presses again).
  ['  Enter taken as a newline → undone', 'shim: Enter pressed', 'shim: newline undone'],
  // The CLI's own turn start, then its hook command (tools/door-hook in the sandbox) connecting to the door.
  ['CLI takes Enter → its turn-start hook reaches the door', 'shim: Enter pressed', 'shim: turn-start hook asked'],
  [
    'turn-start hook: the shim answers: config, record, mail',
    'shim: turn-start hook asked',
    'shim: turn-start hook answered',
  ],
  ['the door answered → model request', 'shim: turn-start hook answered', 'model request'],
];

function mailSpansOf(traceFile: string, called: number, returned: number, request: number): Record<string, number> {
  const at: Record<string, number> = {
    'bench: send called': called,
    'bench: send returned': returned,
    'model request': request,
  };
  const lines = existsSync(traceFile) ? readFileSync(traceFile, 'utf8').split('\n').filter(Boolean) : [];
  for (const line of lines) {
    const m = JSON.parse(line) as { span: string; t: number; origin: number };
    if (m.t >= called) at[m.span] ??= m.t;
    if (m.span.startsWith('hook ') && m.origin >= called)
      at[`${m.span.slice(0, m.span.indexOf(':'))}: process started`] ??= m.origin;
  }
  const out: Record<string, number> = {};
  for (const [label, from, to] of MAIL_SPANS)
    if (at[from] !== undefined && at[to] !== undefined) out[label] = at[to]! - at[from]!;
  return out;
}

function spansOf(traceFile: string, called: number, firstRequest: number): Record<string, number> {
  const at: Record<string, number> = { 'bench: spawn-agent called': called, 'first model request': firstRequest };
  const lines = existsSync(traceFile) ? readFileSync(traceFile, 'utf8').split('\n').filter(Boolean) : [];
  for (const line of lines) {
    const m = JSON.parse(line) as { span: string; t: number; origin: number };
    at[m.span] ??= m.t;
    // Each process's start, named after the first of its marks: the shim's are the harness process's.
    const proc = `${m.span.slice(0, m.span.indexOf(':')).replace('shim', 'harness')}: process started`;
    at[proc] ??= m.origin;
  }
  const out: Record<string, number> = {};
  for (const [label, from, to] of SPANS)
    if (at[from] !== undefined && at[to] !== undefined) out[label] = at[to]! - at[from]!;
  return out;
}

/**
 * The bare CLI, started as the fleet starts it: the same pinned binary, interactive, in a pane
 * of a tmux server of its own (as the bench's fleet starts its own with its first spawn), its
 * task on the command line, in the same project, against a fake API of the same kind, in a
 * home holding what a person's does after the CLI's first run (Bench.person); the time
 * from `tmux new-session` called to its first model request (the CLI's TUI start included).
 * Twice per run in one home: first fresh, then with what its first start left there.
 */
async function bareStart(
  r: Bench,
  bin: string,
  project: string,
  base: Record<string, string>,
  home: TestHome,
): Promise<number> {
  const vendor = await startFakeVendor(r.wire, join(RUNTIME_FIXTURES, 'idle.yaml'), namingFor(r.runtime));
  r.person(home.dir, project, vendor.url);
  const socket = `flotilla-bench-bare-${randomBytes(6).toString('hex')}`;
  const env: Record<string, string> = {
    PATH: base.PATH ?? '/usr/bin:/bin',
    LANG: base.LANG ?? 'C.UTF-8',
    ...(base.TMUX_TMPDIR ? { TMUX_TMPDIR: base.TMUX_TMPDIR } : {}),
    HOME: home.dir,
    XDG_CONFIG_HOME: join(home.dir, '.config'),
    ...r.env(vendor.url),
    ...r.bareEnv,
  };
  const tmux = (args: string[]) => execa('tmux', ['-L', socket, ...args], { env, extendEnv: false, reject: false });
  const t0 = performance.now();
  // The server takes this environment as its own (a fresh server: nothing else in it).
  const opened = await tmux([
    'new-session',
    '-d',
    '-x',
    '200',
    '-y',
    '50',
    '-s',
    'bare',
    '-c',
    project,
    '--',
    bin,
    ...r.bare('get ready'),
  ]);
  try {
    if (opened.exitCode !== 0) throw new Error(`tmux new-session for the bare ${r.runtime.name}: ${opened.stderr}`);
    await eventually(() => vendor.promptTimes.length >= 1, 60_000, `bare ${r.runtime.name}'s first model call`).catch(
      () => undefined,
    );
    if (!vendor.promptTimes.length) {
      const screen = (await tmux(['capture-pane', '-p', '-t', 'bare'])).stdout;
      throw new Error(
        `bare ${r.runtime.name} made no model call (${r.bare('<task>').join(' ')}); its pane:\n${screen}`,
      );
    }
    return vendor.promptTimes[0]! - t0;
  } finally {
    // The CLI and all it started end before its home goes (a CLI still writing there would fail the removal).
    const pid = Number((await tmux(['display-message', '-p', '-t', 'bare', '#{pane_pid}'])).stdout);
    if (pid > 1)
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* ended */
      }
    await tmux(['kill-server']);
    await eventually(() => !existsSync(`/proc/${pid}`), 10_000, 'the bare CLI to end').catch(() => undefined);
    await vendor.close();
  }
}

/**
 * A second agent spawned into the fleet whose first agent is idle: the time from spawn-agent
 * called to the first model request carrying its own task, and its spans.
 */
async function secondSpawn(
  f: VendorFleet,
  r: Bench,
  i: number,
  traceFile: string,
): Promise<{ ready: number; spans: Record<string, number> }> {
  const task = `get ready again ${i}`;
  const asked = (p: unknown) => JSON.stringify(p).includes(task);
  f.env.FLOTILLA_TRACE = traceFile;
  const called = performance.timeOrigin + performance.now();
  const t0 = performance.now();
  await f.spawnChild('a', `bench-again-${i}`, task, r.args);
  await eventually(() => f.vendor.prompts.some(asked), 300_000, "the second agent's first model call");
  delete f.env.FLOTILLA_TRACE;
  const at = f.vendor.promptTimes[f.vendor.prompts.findIndex(asked)]!;
  return { ready: at - t0, spans: spansOf(traceFile, called, performance.timeOrigin + at) };
}

/** The fleet's shim host, from the pid file it keeps among the doors (src/fleet/shim-hosts.ts). */
function shimHostPid(f: VendorFleet): number | undefined {
  return shimHosts(f.layout)[0]?.pid;
}

function save(results: Record<string, unknown>): void {
  (results.machine as Record<string, unknown>).load_after = loadavg().map(tenth);
  writeFileSync(new URL('./results/runtimes.json', import.meta.url), JSON.stringify(results, null, 2) + '\n');
}

it('vendor runtime figures', async () => {
  const results: Record<string, unknown> = {
    machine: { cpus: cpus().length, node: process.version, load_before: loadavg().map(tenth) },
  };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  // Each spawn's marks, kept for a closer look (bench/results is not committed).
  const traces = fileURLToPath(new URL('./results/traces/', import.meta.url));
  rmSync(traces, { recursive: true, force: true });
  mkdirSync(traces, { recursive: true });
  for (const r of RUNTIMES) {
    const bin = pinnedRuntimeBinary(r.runtime.name);
    const open = (script: string): Promise<VendorFleet> =>
      vendorFleet({ runtime: r.runtime, wire: r.wire, script, bin, definitions: { a: DONT_ASK }, env: r.env });
    const ready: number[] = [];
    const bare: number[] = [];
    // The second start of each run: the CLI again in the home its first start made, and a
    // second agent in the fleet its first spawn made (config, model catalogue and code caches warm).
    const readyAgain: number[] = [];
    const bareAgain: number[] = [];
    const spansAgain: Record<string, number>[] = [];
    const spans: Record<string, number>[] = [];
    const mailSpans: Record<string, number>[] = [];
    const idleMail: number[] = [];
    const idleMailFromCalled: number[] = [];
    const workingMail: number[] = [];
    const shimRss: number[] = [];
    const shimAnon: number[] = [];
    const shimPss: number[] = [];
    const hostOne: ReturnType<typeof memoryMb>[] = [];
    const hostTwo: ReturnType<typeof memoryMb>[] = [];
    const settledRss: number[] = [];
    const settledAnon: number[] = [];
    const cliRss: number[] = [];
    const treeRss: number[] = [];
    const nodeRss: number[] = [];
    const nodeAnon: number[] = [];
    const loadBefore = loadavg().map(tenth);
    for (let i = 0; i < RUNS; i++) {
      const f = await open('idle.yaml');
      const bareHome = testHome();
      try {
        // The bare CLI first, in the same minute as the fleet's start: the same load for both.
        bare.push(await bareStart(r, bin, f.project, f.env, bareHome));
        const traceFile = join(traces, `${r.runtime.name}-${i}.jsonl`);
        f.env.FLOTILLA_TRACE = traceFile;
        const called = performance.timeOrigin + performance.now();
        const t0 = performance.now();
        const id = await f.spawnChild('a', `bench-${i}`, 'get ready', r.args);
        await eventually(() => f.vendor.promptTimes.length >= 1, 300_000, 'first model call');
        ready.push(f.vendor.promptTimes[0]! - t0);
        spans.push(spansOf(traceFile, called, performance.timeOrigin + f.vendor.promptTimes[0]!));
        delete f.env.FLOTILLA_TRACE;
        await eventually(
          () => completionsFrom(f, 'lead-parent', id).length === 1 && f.record(id).status === 'idle',
          300_000,
          'idle',
        );
        const idleAt = performance.now();
        // Let the CLI settle at its prompt, as a person would find it; beside it, the least a
        // Node process holds: an idle timer, started the same way (the shim's floor).
        const idleNode = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
        await new Promise((res) => setTimeout(res, 2000));
        const floor = memoryMb(idleNode.pid!);
        idleNode.kill('SIGKILL');
        nodeRss.push(floor.rss);
        nodeAnon.push(floor.anon);
        const shim = f.record(id).pid!;
        const cli = f.cliPid(id);
        const mem = memoryMb(shim);
        shimRss.push(mem.rss);
        shimAnon.push(mem.anon);
        shimPss.push(mem.pss);
        if (cli) cliRss.push(rssMb(cli));
        treeRss.push(tree(shim).reduce((sum, p) => sum + rssMb(p), 0));
        const host = shimHostPid(f);
        if (host) hostOne.push(memoryMb(host));
        const before = f.vendor.promptTimes.length;
        const sendCalled = performance.timeOrigin + performance.now();
        await f.flotilla(['send', id, `wake-${i}`]);
        const sent = performance.now();
        await eventually(() => f.vendor.promptTimes.length > before, 300_000, 'woken model call');
        idleMail.push(f.vendor.promptTimes[before]! - sent);
        idleMailFromCalled.push(performance.timeOrigin + f.vendor.promptTimes[before]! - sendCalled);
        // The shim and its hooks still trace into the spawn's file (their environment kept FLOTILLA_TRACE).
        mailSpans.push(
          mailSpansOf(
            traceFile,
            sendCalled,
            performance.timeOrigin + sent,
            performance.timeOrigin + f.vendor.promptTimes[before]!,
          ),
        );
        await eventually(() => f.record(id).status === 'idle', 300_000, 'idle after the mail');
        bareAgain.push(await bareStart(r, bin, f.project, f.env, bareHome));
        const again = await secondSpawn(f, r, i, join(traces, `${r.runtime.name}-${i}-again.jsonl`));
        readyAgain.push(again.ready);
        spansAgain.push(again.spans);
        if (host) {
          // Both agents idle, each after its first task: the host's growth is what one more vendor agent costs.
          await eventually(
            () => f.records().every((x) => x.status === 'idle' || x.id === 'lead-parent'),
            300_000,
            'both idle',
          );
          await new Promise((res) => setTimeout(res, 2000));
          hostTwo.push(memoryMb(host));
        }
        if (i < SETTLED) {
          // The first agent has been idle since its mail's turn ended; its shim's memory once it has settled.
          await eventually(() => f.record(id).status === 'idle', 300_000, 'idle before settling');
          await new Promise((res) => setTimeout(res, Math.max(0, idleAt + SETTLED_MS - performance.now())));
          const settled = memoryMb(shimHostPid(f) ?? f.record(id).pid!);
          settledRss.push(settled.rss);
          settledAnon.push(settled.anon);
        }
      } finally {
        await f.dispose();
        bareHome.cleanup();
      }
      if (!WORKING) continue;
      const w = await open('bench-working.yaml');
      try {
        const id = await w.spawnChild('a', `benchw-${i}`, 'work a while', r.args);
        await eventually(() => w.vendor.promptTimes.length >= 1, 300_000, 'first model call');
        await w.flotilla(['send', id, `ping-${i}`]);
        const sent = performance.timeOrigin + performance.now();
        const doneFile = join(w.project, 'work-done');
        await eventually(
          () => w.vendor.prompts.some((p) => JSON.stringify(p).includes(`ping-${i}`)),
          300_000,
          'model call with the mail',
        );
        const at = w.vendor.prompts.findIndex((p) => JSON.stringify(p).includes(`ping-${i}`));
        const workEnded = existsSync(doneFile) ? Number(readFileSync(doneFile, 'utf8').trim()) : NaN;
        // Only a send that returned while the command still ran measures a working CLI.
        if (workEnded > sent) workingMail.push(performance.timeOrigin + w.vendor.promptTimes[at]! - workEnded);
      } finally {
        await w.dispose();
      }
    }
    const where: Record<string, { p50: number; p95: number }> = {};
    for (const [label] of SPANS) {
      const v = spans.map((s) => s[label]).filter((x): x is number => x !== undefined);
      if (v.length) where[label] = { p50: ms(pct(v, 50)), p95: ms(pct(v, 95)) };
    }
    const whereAgain: Record<string, { p50: number; p95: number }> = {};
    for (const [label] of SPANS) {
      const v = spansAgain.map((s) => s[label]).filter((x): x is number => x !== undefined);
      if (v.length) whereAgain[label] = { p50: ms(pct(v, 50)), p95: ms(pct(v, 95)) };
    }
    const mailWhere: Record<string, { p50: number; p95: number; runs: number }> = {};
    for (const [label] of MAIL_SPANS) {
      const v = mailSpans.map((s) => s[label]).filter((x): x is number => x !== undefined);
      if (v.length) mailWhere[label] = { p50: ms(pct(v, 50)), p95: ms(pct(v, 95)), runs: v.length };
    }
    results[r.runtime.name] = {
      version: r.version,
      runs: RUNS,
      load_average: { before: loadBefore, after: loadavg().map(tenth) },
      spawn_to_first_model_call_ms: figure(ready),
      bare_cli_to_first_model_call_ms: { ...figure(bare), argv: r.bare('<task>').join(' ') },
      // Each run's fleet start against the bare start of the same minute: the figures that survive a loaded machine.
      fleet_minus_bare_ms: figure(ready.map((x, i) => x - bare[i]!)),
      fleet_over_bare: ratios(ready.map((x, i) => x / bare[i]!)),
      where_the_time_goes_ms: where,
      second_start: {
        spawn_to_first_model_call_ms: figure(readyAgain),
        bare_cli_to_first_model_call_ms: figure(bareAgain),
        fleet_minus_bare_ms: figure(readyAgain.map((x, i) => x - bareAgain[i]!)),
        fleet_over_bare: ratios(readyAgain.map((x, i) => x / bareAgain[i]!)),
        where_the_time_goes_ms: whereAgain,
      },
      mail_into_idle_cli_ms: figure(idleMail),
      // A send that lingers after its delivery shortens the figure above; this one counts the whole send.
      mail_from_send_called_ms: figure(idleMailFromCalled),
      where_the_mail_time_goes_ms: mailWhere,
      ...(WORKING
        ? {
            mail_into_working_cli_ms: {
              ...figure(workingMail),
              note: "mail sent while a shell command ran; the command's end → the model call carrying it (the task's answer call and the turn-end hook between)",
            },
          }
        : {}),
      rss_mb: {
        pane_process: mb(shimRss),
        pane_process_private: mb(shimAnon),
        pane_process_pss: mb(shimPss),
        shim_host_one_agent: mb(hostOne.map((m) => m.rss)),
        shim_host_one_agent_private: mb(hostOne.map((m) => m.anon)),
        shim_host_two_agents: mb(hostTwo.map((m) => m.rss)),
        shim_host_two_agents_private: mb(hostTwo.map((m) => m.anon)),
        shim_host_per_agent: mb(hostTwo.map((m, j) => m.rss - hostOne[j]!.rss)),
        shim_host_settled_30s: mb(settledRss),
        shim_host_settled_30s_private: mb(settledAnon),
        cli: mb(cliRss),
        shim_and_everything_below: mb(treeRss),
        idle_node: mb(nodeRss),
        idle_node_private: mb(nodeAnon),
      },
    };
    // Written after each runtime: a long run cut short keeps what it measured.
    save(results);
  }
  save(results);
  console.log(JSON.stringify(results));
}, 3_600_000);
