import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, listRecords, updateRecord } from '../../src/fleet/registry.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import type { Runtime } from '../../src/runtimes/types.js';
import { recordInput } from '../helpers/records.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';
import { namingFor, startFakeVendor, type FakeVendor, type Wire } from './fake-vendor.js';

const INSTALLER = fileURLToPath(new URL('../../tools/install-runtimes.mjs', import.meta.url));
export const RUNTIME_FIXTURES = fileURLToPath(new URL('../fixtures/runtimes/', import.meta.url));

/**
 * The pinned vendor CLI, installed into the cache folder by tools/install-runtimes.mjs (as
 * `.ci/run` does), or the reason it is not available — printed, and the tests skip.
 */
export function installedRuntime(name: string): { bin?: string; reason?: string } {
  try {
    const out = execFileSync(process.execPath, [INSTALLER, name], { encoding: 'utf8', timeout: 900_000 }).trim();
    const [, bin] = /^\S+ (\/.+)$/.exec(out) ?? [];
    if (bin) return { bin };
    return { reason: out };
  } catch (err) {
    const out = String((err as { stdout?: string }).stdout ?? (err as Error).message).trim();
    return { reason: out || `could not install ${name}` };
  }
}

export interface VendorFleet extends SpawnFleet {
  vendor: FakeVendor;
  /** The registered parent agent: this test process. */
  parent: AgentRecord;
  /** Spawns a child on the runtime under the parent; returns its id. */
  spawnChild(definition: string, id: string, prompt: string, extra?: string[]): Promise<string>;
  /** Pid of the vendor CLI (the shim's child). */
  cliPid(id: string): number | undefined;
  dispose(): Promise<void>;
}

/**
 * A fleet with this test process registered as a live parent agent (depth 0), definitions
 * running on `runtime` with scripts from test/fixtures/runtimes, and a fake vendor API.
 */
export async function vendorFleet(opts: {
  runtime: Runtime; wire: Wire; script: string; bin: string;
  env: (vendorUrl: string) => Record<string, string>;
  definitions: Record<string, string>;
}): Promise<VendorFleet> {
  const fleet = spawnFleet();
  for (const [name, extra] of Object.entries(opts.definitions)) {
    writeFileSync(join(fleet.layout.agentsDir, `${name}.md`), `---\nname: ${name}\ndescription: ${opts.runtime.name} test agent ${name}\nruntime: ${opts.runtime.name}\n${extra}---\nYou are ${name}.\n`);
  }
  const vendor = await startFakeVendor(opts.wire, join(RUNTIME_FIXTURES, opts.script), namingFor(opts.runtime));
  Object.assign(fleet.env, { [opts.runtime.binEnv]: opts.bin }, opts.env(vendor.url));
  const parent = createRecord(fleet.layout, recordInput('lead-parent', {
    name: 'general', pid: process.pid, pidStartTime: processStartTime(process.pid), cwd: fleet.project,
    mode: 'interactive', status: 'working', startedAt: new Date().toISOString(), permissionMode: 'dont_ask', maxTurns: 100,
    effectivePolicy: { tools: ['shell', 'read', 'write', 'edit', 'glob', 'grep', 'send_message', 'check_inbox', 'spawn_agent', 'list_agents', 'wait_for_agents', 'cancel_agent'], permissionMode: 'dont_ask', secrets: [] },
  }));
  return {
    ...fleet,
    vendor,
    parent,
    async spawnChild(definition, id, prompt, extra = []) {
      const r = await fleet.spawnAgent(['--agent', definition, '--id', id, ...extra, prompt]);
      if (r.exitCode !== 0) throw new Error(`spawn-agent failed (${r.exitCode}): ${r.stderr}`);
      return r.stdout.trim();
    },
    cliPid(id) {
      const rec = listRecords(fleet.layout).find((r) => r.id === id);
      if (!rec?.pid) return undefined;
      return childrenOf(rec.pid)[0];
    },
    async dispose() {
      // The fleet's cleanup kills every registered pid: this process must not be one of them.
      for (const r of listRecords(fleet.layout)) if (r.pid === process.pid) updateRecord(fleet.layout, r.id, { pid: null, pidStartTime: null });
      await vendor.close();
      await fleet.close();
    },
  };
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch { /* gone */ }
  }
  return out;
}
