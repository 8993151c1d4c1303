import { execa } from 'execa';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { busFor, closeBuses } from '../../src/bus/open.js';
import { defaultConfig } from '../../src/config/schema.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord } from '../../src/fleet/registry.js';
import { list } from '../../src/inbox/read.js';
import { ensureState } from '../../src/layout/layout.js';
import { stopHarnesses } from '../helpers/fleet.js';
import { BUSES, natsServer, personBus, type BusKind, type NatsServer } from '../helpers/nats.js';
import { fixture } from '../helpers/scripts.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { project, type Project } from '../hooks-e2e/project.js';

const LONG = fixture('hooks/long.yaml');
const STEPS = fixture('lifecycle/many-steps.yaml');
const HELD = fixture('lifecycle/held-step.yaml');

let p: Project;
let stopLog: string;
beforeEach(() => {
  p = project('flotilla-once-');
  stopLog = join(p.project, 'stop.log');
  // A stop hook slow enough for a second signal to land while it runs.
  p.config({
    hooks: { stop: [{ command: `sleep 0.1; echo "$FLOTILLA_AGENT_ID $FLOTILLA_EXIT_REASON" >> ${stopLog}` }] },
  });
  p.agent('worker', { permissions: { permission_mode: 'dont_ask' } });
});
afterEach(async () => {
  await closeBuses();
  p.cleanup();
});
let busUrl = 'maildir';

/** Writes zeros until the filesystem is full. */
function fillUp(path: string): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

/**
 * Completion messages from `id` in `to`'s inbox, read or not. On nats:// what waits on the bus
 * for an owner no harness feeds (the person, a parent played by this test) is brought into its
 * spool first, as `flotilla inbox` and `status` do (§18).
 */
async function completions(id: string, to = 'human'): Promise<number> {
  if (busUrl !== 'maildir')
    await busFor(p.layout, { fleet: { ...defaultConfig().fleet, bus: busUrl } }).mail.collect([to]);
  return (await list(p.layout, to, { includeRead: true })).filter(
    (i) => i.message.kind === 'completion' && i.message.from === id,
  ).length;
}

function stopRuns(id: string): number {
  return existsSync(stopLog)
    ? readFileSync(stopLog, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith(`${id} `)).length
    : 0;
}

async function startWorking(
  script: string,
  env: Record<string, string> = {},
): Promise<{ id: string; pid: number; proc: ReturnType<Project['start']> }> {
  const before = new Set(p.ids());
  const proc = p.start(['run', '--agent', 'worker', '--model', `script:${script}`, '--oneshot', 'work'], { env });
  const id = await eventually(
    () => p.ids().find((i) => !before.has(i) && p.record(i).status === 'working'),
    60_000,
    'the agent to work',
  ).catch(async (err: unknown) => {
    proc.kill('SIGKILL');
    const r = await proc;
    throw new Error(`${String(err)}; the agent said: ${String(r.stderr)}`);
  });
  return { id, pid: p.record(id).pid!, proc };
}

/**
 * Every ending leaves exactly this: a terminal record, one completion, one stop-hook run — also after the reaper
 * looked.
 */
async function expectOneEnding(id: string, status: string, to = 'human'): Promise<void> {
  expect(p.record(id).status).toBe(status);
  await p.run(['reap']);
  expect(await completions(id, to)).toBe(1);
  expect(stopRuns(id)).toBe(1);
  // On nats:// it travelled the fleet's stream: sent once on the bus.
  if (busUrl !== 'maildir') {
    const sent = p.audit().filter((a) => a.event === 'message_sent' && a.kind === 'completion' && a.from === id);
    expect(sent.map((a) => a.bus)).toEqual(['nats']);
  }
}

// Every exit path holds on every bus (docs/design.md §5.7, §18): on nats:// (the person's
// config names a real nats-server started here) each completion travels the fleet's stream.
describe.each(BUSES)('exactly one completion and one stop hook on the $bus bus', ({ bus: kind }: { bus: BusKind }) => {
  let server: NatsServer | undefined;
  beforeAll(async () => {
    if (kind === 'nats') server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    busUrl = 'maildir';
    await server?.kill();
  });
  beforeEach(() => {
    personBus(join(p.project, '.xdg'), kind, server);
    busUrl = server?.url ?? 'maildir';
  });

  // The signal race is the harness's own; on nats:// two of the delays are enough to show the
  // completion's path (the suite's time is shared).
  for (const delay of kind === 'maildir' ? [0, 10, 20, 40] : [0, 20]) {
    it(`a second SIGTERM ${delay} ms after the first skips neither (twice)`, async () => {
      for (let round = 0; round < 2; round++) {
        const { id, pid, proc } = await startWorking(LONG);
        process.kill(pid, 'SIGTERM');
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          /* already gone */
        }
        await proc;
        await expectOneEnding(id, 'cancelled');
      }
    }, 120_000);
  }

  it('a corrupt parent record: the child still ends with one completion to that parent', async () => {
    // The test process plays the parent agent (lineage is checked against live ancestors).
    createRecord(
      p.layout,
      recordInput('boss-000001', {
        status: 'working',
        pid: process.pid,
        pidStartTime: processStartTime(process.pid),
        cwd: p.project,
        permissionMode: 'dont_ask',
        effectivePolicy: { tools: ['shell'], permissionMode: 'dont_ask', secrets: [] },
      }),
    );
    const { id, proc } = await startWorking(STEPS, { FLOTILLA_AGENT_ID: 'boss-000001' });
    expect(p.record(id).parentId).toBe('boss-000001');
    writeFileSync(p.layout.registryFile('boss-000001'), '{"id": "boss-000001", garbage');
    const r = await proc;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    await expectOneEnding(id, 'completed', 'boss-000001');
    // Status, cancel and gc keep working with the damaged record present.
    const status = await p.run(['status']);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/boss-000001.*corrupt/);
    const cancel = await p.run(['cancel', 'boss-000001']);
    expect(cancel.exitCode).not.toBe(0);
    expect(cancel.stderr).toMatch(/not JSON.*flotilla gc/);
    const gc = await p.run(['gc']);
    expect(gc.exitCode, gc.stderr).toBe(0);
    expect(gc.stdout).toMatch(/set aside 1 corrupt record \(boss-000001\)/);
    expect((await p.run(['status'])).stdout).not.toMatch(/corrupt/);
  }, 120_000);

  it('a corrupt own record: the agent ends failed, saying why, with one completion', async () => {
    const { id, proc } = await startWorking(HELD);
    // While a long step runs the harness does not write its record: damage it then. The step
    // runs until the damage is done (a fixed-length step could end first on a slow machine).
    await eventually(() => p.record(id).lastLine.includes('! -e damaged'), 30_000, 'the held step');
    writeFileSync(p.layout.registryFile(id), 'not json at all');
    writeFileSync(join(p.project, 'damaged'), '');
    const r = await proc;
    expect(r.exitCode).toBe(1);
    expect(p.record(id).status).toBe('failed');
    expect(p.record(id).exitReason).toMatch(/registry|JSON|invalid/i);
    await expectOneEnding(id, 'failed');
  }, 120_000);

  it('a start that fails once its inbox is watched (a start hook damages its record): the harness exits saying why, not held alive', async () => {
    const agents = dirname(p.layout.registryFile('x'));
    p.config({
      hooks: {
        start: [{ command: `printf 'not json at all' > "${agents}/$FLOTILLA_AGENT_ID.json"` }],
        stop: [{ command: `echo "$FLOTILLA_AGENT_ID $FLOTILLA_EXIT_REASON" >> ${stopLog}` }],
      },
    });
    // Held alive by its inbox watcher, the process never ended and this waited for good.
    const r = await p.run(['run', '--agent', 'worker', '--model', `script:${STEPS}`, '--oneshot', 'work']);
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toMatch(/^flotilla: .*(registry|JSON|invalid)/im);
  }, 120_000);

  it('inotify exhausted (injected): the agent polls, reads its mail, and ends with one completion', async () => {
    const { id, proc } = await startWorking(STEPS, { FLOTILLA_FAULT: 'watch-enospc' });
    // Sent as a person's `flotilla send` sends it: on the fleet's bus.
    await busFor(p.layout, { fleet: { ...defaultConfig().fleet, bus: busUrl } }).mail.deliver({
      from: 'human',
      to: id,
      kind: 'message',
      body: 'mail while polling',
    });
    const r = await proc;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(readFileSync(p.layout.transcript(id), 'utf8')).toContain('mail while polling');
    await expectOneEnding(id, 'completed');
  }, 120_000);

  it('ENOSPC on state/ (a small tmpfs; needs root): the agent ends failed with the cause and one completion', async () => {
    // Mounting the tmpfs needs root, as CI runs: say so before anything starts, never midway.
    expect(process.getuid?.(), 'this test mounts a 4 MiB tmpfs and needs root: run it as root (CI does)').toBe(0);
    const state = p.layout.state;
    const mounted = await execa('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', state], { reject: false });
    expect(
      mounted.exitCode,
      `cannot mount a 4 MiB tmpfs on ${state} (${String(mounted.stderr).trim()}) — the ENOSPC test runs as root`,
    ).toBe(0);
    try {
      ensureState(p.layout);
      const { id, proc } = await startWorking(STEPS);
      fillUp(join(state, 'filler'));
      const r = await proc;
      expect(r.exitCode).toBe(1);
      expect(p.record(id).exitReason).toMatch(/ENOSPC|no space/i);
      await expectOneEnding(id, 'failed');
    } finally {
      stopHarnesses(p.layout);
      await execa('umount', ['-l', state], { reject: false });
    }
  }, 120_000);

  it('a refused agent runs its stop hooks and sends one completion', async () => {
    createRecord(p.layout, recordInput('lonely-000001', { cwd: p.project, model: `script:${LONG}` }));
    // No FLOTILLA_SLOT: refused at its own admission check.
    const r = await p.run(['run', '--spawned', 'lonely-000001']);
    expect(r.exitCode).not.toBe(0);
    await expectOneEnding('lonely-000001', 'refused');
  }, 120_000);
});
