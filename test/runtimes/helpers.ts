import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, listRecords, updateRecord } from '../../src/fleet/registry.js';
import { markState } from '../../src/fleet/state-claim.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import type { Layout } from '../../src/layout/layout.js';
import type { Runtime } from '../../src/runtimes/types.js';
import type { HomeKind } from '../helpers/home.js';
import { recordInput } from '../helpers/records.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';
import { namingFor, startFakeVendor, type FakeVendor, type Wire } from './fake-vendor.js';

export const RUNTIME_FIXTURES = fileURLToPath(new URL('../fixtures/runtimes/', import.meta.url));
const NODE_MODULES = fileURLToPath(new URL('../../node_modules/', import.meta.url));

/**
 * Where `npm ci` puts each vendor CLI the runtime tests drive, as a person's `npm install`
 * puts it on their PATH: Claude Code's native binary (its install script links it over the
 * package's bin; the platform package holds the same file, so no install script has to run),
 * Codex's JavaScript launcher (it starts the native binary as its child, with the variables
 * that binary expects from an npm install), Gemini's bundled script (its shebang runs node).
 */
const PINNED: Record<string, () => string> = {
  claude: () => join(NODE_MODULES, '@anthropic-ai', `claude-code-${process.platform}-${process.arch}`, 'claude'),
  codex: () => join(NODE_MODULES, '@openai', 'codex', 'bin', 'codex.js'),
  gemini: () => join(NODE_MODULES, '@google', 'gemini-cli', 'bundle', 'gemini.js'),
};

/**
 * The process that is the CLI itself, the one a crash takes down: under Codex's launcher,
 * the native binary it starts; for the others, the pinned binary.
 */
function cliProcessBinary(name: string, bin: string): string {
  if (name !== 'codex') return bin;
  const vendor = join(NODE_MODULES, '@openai', `codex-${process.platform}-${process.arch}`, 'vendor');
  const triple = existsSync(vendor)
    ? readdirSync(vendor).find((d) => existsSync(join(vendor, d, 'bin', 'codex')))
    : undefined;
  return triple ? join(vendor, triple, 'bin', 'codex') : bin;
}

/**
 * The pinned vendor CLI (package.json devDependencies, installed by `npm ci`); throws with
 * what to do when it is missing, so a broken install fails the tests instead of skipping them.
 */
export function pinnedRuntimeBinary(name: string): string {
  const bin = PINNED[name]?.();
  if (!bin || !existsSync(bin))
    throw new Error(`${name} CLI not found at ${bin ?? '(no pin)'}: run npm ci (it installs the pinned devDependency)`);
  return bin;
}

/** The registered parent's tools (a child is offered no more): the workspace, the fleet, leases and the task board. */
const PARENT_TOOLS = [
  'shell',
  'read',
  'write',
  'edit',
  'glob',
  'grep',
  'send_message',
  'check_inbox',
  'spawn_agent',
  'list_agents',
  'wait_for_agents',
  'cancel_agent',
  'merge_work',
  'lease_paths',
  'task_create',
  'task_list',
  'task_claim',
  'task_update',
  'wait_for_tasks',
];

export interface VendorFleet extends SpawnFleet {
  vendor: FakeVendor;
  /** The registered parent agent: this test process. */
  parent: AgentRecord;
  /** Spawns a child on the runtime under the parent; returns its id. */
  spawnChild(definition: string, id: string, prompt: string, extra?: string[]): Promise<string>;
  /** The fresh HOME every command of the test runs with (nothing in it but what the product writes). */
  home: string;
  /** Pid of the vendor CLI itself (the shim's descendant; under Codex's launcher, the native binary). */
  cliPid(id: string): number | undefined;
  dispose(): Promise<void>;
}

/**
 * A fleet with this test process registered as a live parent agent (depth 0), definitions
 * running on `runtime` with scripts from test/fixtures/runtimes, and a fake vendor API.
 */
export async function vendorFleet(opts: {
  runtime: Runtime;
  wire: Wire;
  script: string;
  bin: string;
  env: (vendorUrl: string) => Record<string, string>;
  definitions: Record<string, string>;
  /** The registered parent's permission mode (a child may not ask for more); dont_ask unless said. */
  parentMode?: 'dont_ask' | 'bypass_permissions';
  /** Added to the fleet's config (top-level keys other than `agents` and `models`). */
  config?: string;
  /** The fleet's tmux server under this TMUX_TMPDIR, outside /tmp. */
  tmuxTmpdir?: string;
  /** The shape of the fresh HOME (test/helpers/home.ts). */
  home?: HomeKind;
}): Promise<VendorFleet> {
  // A fresh HOME (spawnFleet's): a CLI finds no login, trust or first-run answers but what the product writes.
  const fleet = spawnFleet({
    ...(opts.config ? { config: opts.config } : {}),
    ...(opts.tmuxTmpdir ? { tmuxTmpdir: opts.tmuxTmpdir } : {}),
    ...(opts.home ? { home: opts.home } : {}),
  });
  // The state folder as Flotilla makes it (cli/context.ts: made and marked by a fleet's first command), so the first
  // spawn does not take it for one that came with a clone and ask git (fleet/state-claim.ts), as no real fleet's does.
  markState(fleet.layout);
  for (const [name, extra] of Object.entries(opts.definitions)) {
    writeFileSync(
      join(fleet.layout.agentsDir, `${name}.md`),
      `---\nname: ${name}\ndescription: ${opts.runtime.name} test agent ${name}\nruntime: ${opts.runtime.name}\n${extra}---\nYou are ${name}.\n`,
    );
  }
  const vendor = await startFakeVendor(opts.wire, join(RUNTIME_FIXTURES, opts.script), namingFor(opts.runtime));
  Object.assign(fleet.env, { [opts.runtime.binEnv]: opts.bin }, opts.env(vendor.url));
  const parent = createRecord(
    fleet.layout,
    recordInput('lead-parent', {
      name: 'general',
      pid: process.pid,
      pidStartTime: processStartTime(process.pid),
      cwd: fleet.project,
      mode: 'interactive',
      status: 'working',
      startedAt: new Date().toISOString(),
      permissionMode: opts.parentMode ?? 'dont_ask',
      maxTurns: 100,
      effectivePolicy: { tools: PARENT_TOOLS, permissionMode: opts.parentMode ?? 'dont_ask', secrets: [] },
    }),
  );
  return {
    ...fleet,
    vendor,
    parent,
    home: fleet.env.HOME!,
    async spawnChild(definition, id, prompt, extra = []) {
      const r = await fleet.spawnAgent(['--agent', definition, '--id', id, ...extra, prompt]);
      if (r.exitCode !== 0) throw new Error(`spawn-agent failed (${r.exitCode}): ${r.stderr}`);
      return r.stdout.trim();
    },
    cliPid: (id) => vendorCliPid(fleet.layout, opts.runtime.name, opts.bin, id),
    async dispose() {
      // The fleet's cleanup kills every registered pid: this process must not be one of them.
      for (const r of listRecords(fleet.layout))
        if (r.pid === process.pid) updateRecord(fleet.layout, r.id, { pid: null, pidStartTime: null });
      await vendor.close();
      await fleet.close();
    },
  };
}

/**
 * Pid of an agent's vendor CLI itself: the shim's descendant that runs the CLI binary (the shim
 * also starts short-lived helpers such as tmux clients; in the sandbox the CLI runs under
 * bwrap's two processes); a script CLI runs as `node <script>`.
 */
export function vendorCliPid(layout: Layout, runtime: string, bin: string, id: string): number | undefined {
  const rec = listRecords(layout).find((r) => r.id === id);
  if (!rec?.pid) return undefined;
  const cli = cliProcessBinary(runtime, bin);
  const isCli = (pid: number) => cmdline(pid).slice(0, 2).includes(cli);
  let level = childrenOf(rec.pid);
  for (let depth = 0; depth < 6 && level.length; depth++) {
    const found = level.find(isCli);
    if (found) return found;
    level = level.flatMap(childrenOf);
  }
  return undefined;
}

/** The command lines of every process below an agent's shim (its CLI, the CLI's children, the shim's). */
export function agentProcesses(layout: Layout, id: string): string[][] {
  const rec = listRecords(layout).find((r) => r.id === id);
  if (!rec?.pid) return [];
  const out: string[][] = [];
  for (let level = childrenOf(rec.pid); level.length; level = level.flatMap(childrenOf))
    out.push(...level.map(cmdline).filter((c) => c.length > 1));
  return out;
}

function cmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return out;
}
