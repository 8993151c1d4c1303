import { execa } from 'execa';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, updateRecord } from '../../src/fleet/registry.js';
import { reconcileDead } from '../../src/lifecycle/reconcile.js';
import { CLI } from '../helpers/cli.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, isAlive, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

let f: SpawnFleet | undefined;

function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe('crashes (§5.7)', () => {
  it('racing reapers (five `flotilla reap` processes and in-process reconciles) end a dead agent exactly once', async () => {
    f = spawnFleet({ config: `hooks:\n  stop:\n    - command: "echo $FLOTILLA_AGENT_ID >> stop-hooks.txt"\n` });
    // A real process that dies: its pid and start time are what a harness would have registered.
    const proc = execa('sleep', ['30']);
    const pid = proc.pid!;
    const start = processStartTime(pid);
    createRecord(f.layout, recordInput('par-aaaaaa', { status: 'idle', cwd: f.project }));
    createRecord(
      f.layout,
      recordInput('dead-aaaaa', {
        status: 'working',
        parentId: 'par-aaaaaa',
        rootId: 'par-aaaaaa',
        depth: 1,
        pid,
        pidStartTime: start,
        cwd: f.project,
      }),
    );
    proc.kill('SIGKILL');
    await proc.catch(() => undefined);
    expect(isAlive(pid)).toBe(false);
    const { config } = await loadConfig({ layout: f.layout, env: f.env, userFile: null });
    const cli = Array.from({ length: 5 }, () =>
      execa(process.execPath, [CLI, 'reap'], { cwd: f!.project, env: f!.env, extendEnv: false, reject: false }),
    );
    const inproc = Array.from({ length: 3 }, () => reconcileDead(f!.layout, config, { parentId: 'par-aaaaaa' }));
    const [cliResults, ended] = await Promise.all([Promise.all(cli), Promise.all(inproc)]);
    for (const r of cliResults) expect(r.exitCode).toBe(0);
    const mail = completionsFrom(f, 'par-aaaaaa', 'dead-aaaaa');
    expect(mail).toHaveLength(1);
    expect(mail[0]!.status).toBe('crashed');
    expect(f.record('dead-aaaaa').status).toBe('crashed');
    expect(readFileSync(join(f.project, 'stop-hooks.txt'), 'utf8')).toBe('dead-aaaaa\n');
    const reapLines = readFileSync(f.layout.auditFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"event":"reap"'));
    expect(reapLines).toHaveLength(1);
    // Exactly one of all the callers reports having ended it.
    const fromCli = cliResults.filter((r) => r.stdout.includes('dead-aaaaa crashed')).length;
    const fromInproc = ended.filter((e) => e.length === 1).length;
    expect(fromCli + fromInproc).toBe(1);
  });

  it('an idle persistent agent that dies ends completed (exited while idle) with no second completion', async () => {
    f = spawnFleet();
    const proc = execa('sleep', ['30']);
    const pid = proc.pid!;
    createRecord(
      f.layout,
      recordInput('idle-aaaaa', {
        status: 'idle',
        pid,
        pidStartTime: processStartTime(pid),
        cwd: f.project,
        lastTask: {
          task: 1,
          status: 'completed',
          exitReason: null,
          finishedAt: new Date().toISOString(),
          outputPath: null,
        },
      }),
    );
    writeFileSync(f.layout.marker('idle-aaaaa.task-1.completion'), '');
    proc.kill('SIGKILL');
    await proc.catch(() => undefined);
    const r = await f.flotilla(['status', '--json']);
    const rec = (JSON.parse(r.stdout) as { id: string; status: string; exitReason: string }[]).find(
      (x) => x.id === 'idle-aaaaa',
    )!;
    expect(rec.status).toBe('completed');
    expect(rec.exitReason).toBe('exited while idle');
    expect(f.mail('human')).toHaveLength(0);
  });

  it('a record left pending by a spawner that died is ended after the grace period, not before', async () => {
    f = spawnFleet();
    const { config } = await loadConfig({ layout: f.layout, env: f.env, userFile: null });
    createRecord(f.layout, recordInput('fresh-aaaa', { status: 'spawning', cwd: f.project }));
    createRecord(
      f.layout,
      recordInput('stale-aaaa', {
        status: 'spawning',
        cwd: f.project,
        createdAt: new Date(Date.now() - 60_000).toISOString(),
      }),
    );
    const ended = await reconcileDead(f.layout, config);
    expect(ended.map((r) => r.id)).toEqual(['stale-aaaa']);
    expect(f.record('stale-aaaa').status).toBe('crashed');
    expect(f.record('stale-aaaa').exitReason).toBe('never started (its spawner is gone)');
    expect(f.record('fresh-aaaa').status).toBe('spawning');
    // End it, or the fleet's close waits out its deadline for this spawn to settle.
    updateRecord(f.layout, 'fresh-aaaa', { status: 'crashed', exitReason: 'test over' });
  });
});

// The crash path holds on every bus (docs/design.md §5.7, §18): on nats:// the completion
// travels the fleet's stream (a real nats-server started here) into the parent's spool.
describe.each([{ bus: 'maildir' }, { bus: 'nats' }] as const)('a crash on the $bus bus (§5.7)', ({ bus: kind }) => {
  let server: NatsServer | undefined;
  beforeAll(async () => {
    if (kind === 'nats') server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server?.kill();
  });

  it(`SIGKILL of a working child: its parent gets exactly one crashed completion (${kind} bus)`, async () => {
    f = spawnFleet({ definitions: { lead: 'lead-one-sleeper.yaml', sleeper: 'sleeper.yaml' } });
    // The person's config names the bus, so every process of the fleet — harnesses, the pane-died reaper — uses it.
    if (kind === 'nats') {
      mkdirSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla'), { recursive: true });
      writeFileSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml'), `fleet:\n  bus: ${server!.url}\n`);
    }
    expect((await f.spawnAgent(['--agent', 'lead', '--id', 'lead-k', 'spawn a sleeper'])).exitCode).toBe(0);
    const child = await eventually(
      () => {
        const r = f!.records().find((x) => x.id === 's-one');
        return r && r.status === 'working' && r.lastLine.startsWith('$ sleep') && r;
      },
      15_000,
      'the sleeper to be working',
    );
    // The sleeper's running shell command: its own process group, recorded for the reaper.
    // (lastLine shows the call as it is announced; the group is recorded once the command starts.)
    const groups = await eventually(
      () => {
        try {
          const g = JSON.parse(readFileSync(f!.layout.marker('s-one.groups'), 'utf8')) as { pgid: number }[];
          return g.length === 1 && g;
        } catch {
          return false;
        }
      },
      5_000,
      'the running command to be recorded',
    );
    process.kill(child.pid!, 'SIGKILL');
    // How fast it arrives is measured by `npm run bench`; here, that it arrives without other mail.
    const mail = await eventually(() => completionsFrom(f!, 'lead-k', 's-one')[0], 30_000, 'a crashed completion');
    expect(mail.status).toBe('crashed');
    // A parent that reads the transcript on the completion sees how it ended.
    expect(JSON.parse(readFileSync(f.layout.transcriptMeta('s-one'), 'utf8')).status).toBe('crashed');
    // On nats:// it travelled the stream: sent on the bus, spooled under its id (§18).
    if (kind === 'nats') {
      const sent = readFileSync(f.layout.auditFile, 'utf8')
        .split('\n')
        .filter(
          (l) =>
            l.includes('"event":"message_sent"') && l.includes('"to":"lead-k"') && l.includes('"kind":"completion"'),
        );
      expect(sent.length).toBe(1);
      expect(sent[0]).toContain('"bus":"nats"');
    }
    // The pane-died hook reports the signal; the parent's check may get there before tmux has
    // processed the death (tmux 3.3 can lag until a client talks to it) and says less.
    expect(mail.exit_reason).toMatch(/^(killed \(SIGKILL\)|process died)$/);
    const rec = f.record('s-one');
    expect(rec.status).toBe('crashed');
    expect(rec.exitReason).toBe(mail.exit_reason);
    // No orphan: the command the dead harness was running is gone with it.
    await eventually(() => !isGroupAlive(groups[0]!.pgid), 5_000, 'the orphaned tool group to be killed');
    expect(rec.lastTask?.status).toBe('crashed');
    // Both paths (pane-died hook and the parent's check) ran by now; still exactly one.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(completionsFrom(f, 'lead-k', 's-one')).toHaveLength(1);
    const reaps = readFileSync(f.layout.auditFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"event":"reap"') && l.includes('"s-one"'));
    expect(reaps).toHaveLength(1);
    // The dead pane stays readable until gc. (tmux with libutempter can miss the SIGCHLD of a
    // pane's process, and the parent's check may have ended the agent first: nudge it.)
    await eventually(
      async () => {
        await f!.tmux.nudge();
        return (await f!.tmux.tmux('display-message', '-p', '-t', rec.tmux!.paneId, '#{pane_dead}')) === '1';
      },
      30_000,
      'the dead pane',
    );
  });
});
