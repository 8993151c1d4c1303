import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { encodeLineage } from '../../src/hosts/lineage.js';
import { scriptCalls, toolOutput } from '../helpers/scripts.js';
import { eventually } from '../helpers/tmux.js';
import type { SpawnFleet } from '../spawn/helpers.js';
import { hostsOnBus } from './helpers.js';
import { openDashboard } from '../helpers/dashboard.js';

/**
 * Cancels that reach a tree's children on another host (docs/design.md §5.8, §17.7): two hosts
 * on one real nats-server, r1 reached only through a real sshd. Each root runs here; its
 * children on r1 are opened there as its children (`flotilla spawn --lineage` there, as a
 * spawn from here does).
 */
const hosts = hostsOnBus();

/** A live agent `id` on this host, idle once it answered its task. */
async function idleRoot(local: SpawnFleet, id: string) {
  expect((await local.spawnAgent(['--id', id, '--agent', 'idle', 'start'])).exitCode).toBe(0);
  return eventually(
    () => {
      const r = local.record(id);
      return r.status === 'idle' ? r : undefined;
    },
    60_000,
    `${id} idle`,
  );
}

/** Opens `id` on r1 as a child of `parentId` here, and waits for it to be idle there. */
async function farChild(
  local: SpawnFleet,
  remote: SpawnFleet,
  parentId: string,
  id: string,
  opts: { background?: boolean; agent?: string; until?: string } = {},
) {
  const lineage = encodeLineage('here', local.record(parentId), defaultConfig().limits);
  const spawned = await remote.flotilla([
    'spawn',
    '--lineage',
    lineage,
    '--agent',
    opts.agent ?? 'idle',
    '--id',
    id,
    ...(opts.background ? ['--background'] : []),
    'work',
  ]);
  expect(spawned.exitCode, spawned.stderr).toBe(0);
  const until = opts.until ?? 'idle';
  await eventually(() => remote.record(id).status === until, 60_000, `${id} ${until} on r1`).catch((err: Error) => {
    const r = remote.record(id);
    throw new Error(`${err.message} (it is ${r.status}: ${r.exitReason ?? r.lastLine})`);
  });
  // As this host sees it: on the bus, in `status` (a record reaches the bus a moment after its host's registry).
  await eventually(
    async () => {
      const rows = JSON.parse((await local.flotilla(['status', '--json'])).stdout) as { id: string; status: string }[];
      return rows.some((x) => x.id === id && x.status === until);
    },
    60_000,
    `${id} ${until} in this host's status`,
  );
}

describe('cancels across hosts', { timeout: 300_000 }, () => {
  it("cancel --tree cancels the tree's child on another host there, and says so", async () => {
    const { local, remote } = await hosts.open({
      localDefinitions: { idle: 'idle-worker.yaml' },
      remoteDefinitions: { idle: 'idle-worker.yaml' },
    });
    await idleRoot(local, 'R');
    await farChild(local, remote, 'R', 'K');

    const cancelled = await local.flotilla(['cancel', 'R', '--tree']);
    expect(cancelled.stderr).toBe('');
    expect(cancelled.exitCode).toBe(0);
    expect(cancelled.stdout).toBe('cancelled R, K');
    expect(remote.record('K').status).toBe('cancelled');
    expect(local.record('R').status).toBe('cancelled');
  });

  it('an agent that ends, cancelled or crashed, takes its foreground children on another host with it, not its background ones', async () => {
    const { local, remote } = await hosts.open({
      localDefinitions: { idle: 'idle-worker.yaml' },
      remoteDefinitions: { idle: 'idle-worker.yaml', sleeper: 'sleeper.yaml' },
    });
    // Its own ending (SIGTERM straight to the harness, no `flotilla cancel` in between).
    const r = await idleRoot(local, 'R');
    await farChild(local, remote, 'R', 'K');
    await farChild(local, remote, 'R', 'B', { background: true, agent: 'sleeper', until: 'working' });
    process.kill(r.pid!, 'SIGTERM');
    await eventually(() => remote.record('K').status === 'cancelled', 60_000, 'K cancelled on r1');
    expect(local.record('R').status).toBe('cancelled');
    expect(remote.record('K').exitReason).toMatch(/cancelled/);

    // A crash: the reaper's ending does what the harness could not.
    const s = await idleRoot(local, 'S');
    await farChild(local, remote, 'S', 'L');
    process.kill(s.pid!, 'SIGKILL');
    // Nobody reads the fleet: S's pane (its sh, which tmux's missed SIGCHLD cannot fool) reaps it.
    await eventually(() => remote.record('L').status === 'cancelled', 60_000, 'L cancelled on r1');
    // Ended by the reaper: `crashed`, or `completed` when it was idle between L's answer (its mail) and its own.
    expect(local.record('S').exitReason).toMatch(/^(killed \(SIGKILL\)|exited while idle)$/);

    // The background child works on, as a background child here would.
    expect(remote.record('B').status).toBe('working');
  });

  it("the dashboard's c and the cancel_agent tool reach the child's children on another host, and say so", async () => {
    const logs = mkdtempSync(join(tmpdir(), 'flotilla-farcancel-logs-'));
    const { local, remote } = await hosts.open({
      localDefinitions: { idle: 'idle-worker.yaml', parent: '../hosts/cancel-parent.yaml' },
      remoteDefinitions: { idle: 'idle-worker.yaml' },
    });
    // The person's dashboard on this host cancels R, whose child K runs on r1.
    await idleRoot(local, 'R');
    await farChild(local, remote, 'R', 'K');
    const tmux = local.tmux;
    await openDashboard(tmux, { session: 'dash', width: 120, height: 30, cwd: local.project, env: local.env });
    await tmux.waitFor('dash:0', /Host r1 — [^\n]*\n.{0,3}K \*?\s*idle/, 90_000);
    await tmux.tmux('send-keys', '-t', 'dash:0', 'c');
    await tmux.waitFor('dash:0', /cancel R\? \(y\/n\)/, 30_000);
    await tmux.tmux('send-keys', '-t', 'dash:0', 'y');
    await tmux.waitFor('dash:0', /^cancelled R, K$/m, 90_000);
    expect(remote.record('K').status).toBe('cancelled');

    // A parent's cancel_agent of its child C here, whose child K2 runs on r1.
    const log = join(logs, 'parent-calls.jsonl');
    const p = await local.spawnAgent(['--id', 'P', '--agent', 'parent', 'lead'], { FLOTILLA_SCRIPT_LOG: log });
    expect(p.exitCode, p.stderr).toBe(0);
    await eventually(() => local.record('C').status === 'idle', 60_000, 'C idle');
    await farChild(local, remote, 'C', 'K2');
    expect((await local.flotilla(['send', 'P', 'cancel your child now'])).exitCode).toBe(0);
    const last = await eventually(
      () => scriptCalls(log).find((c) => toolOutput(c, 'cancel_agent') !== undefined),
      120_000,
      'the parent model to see cancel_agent return',
    );
    expect(toolOutput(last, 'cancel_agent')).toBe('"Cancelled C, K2."');
    expect(remote.record('K2').status).toBe('cancelled');
    rmSync(logs, { recursive: true, force: true });
  });
});
