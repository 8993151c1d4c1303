import { execa, type ResultPromise } from 'execa';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord } from '../../src/fleet/registry.js';
import { CLI } from '../helpers/cli.js';
import { natsServer, personBus, type NatsServer } from '../helpers/nats.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';
import { openDashboard } from '../helpers/dashboard.js';

/**
 * The dashboard on a `nats://` fleet (docs/design.md §15, §16, §18): the boards and leases are
 * the fleet's, in the bus's BOARD and LEASES buckets, so `flotilla watch` shows the tasks and
 * lease marks kept there — a task claimed and a file leased by an agent through the CLI —
 * not this host's (empty) files.
 */

let server: NatsServer;
let f: SpawnFleet | undefined;
const procs: ResultPromise[] = [];
beforeAll(async () => {
  server = await natsServer();
});
afterAll(async () => {
  await server.kill();
});
afterEach(async () => {
  for (const p of procs.splice(0)) p.kill('SIGKILL');
  await f?.close();
  f = undefined;
});

/** An agent: a real `sh` registered as a live harness that runs `script` ($F is the CLI) and stays alive. */
function agent(id: string, script: string): void {
  const sh = execa('sh', ['-c', `${script}; while :; do sleep 0.2; done`], {
    cwd: f!.project,
    env: { ...f!.env, FLOTILLA_AGENT_ID: id, F: `${process.execPath} ${CLI}` },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  procs.push(sh);
  createRecord(
    f!.layout,
    recordInput(id, { status: 'working', pid: sh.pid!, pidStartTime: processStartTime(sh.pid!), cwd: f!.project }),
  );
}

function read(name: string): string | undefined {
  const path = join(f!.project, name);
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  return text === '' ? undefined : text.trim();
}

const DASH = 'dash:0';

describe('the dashboard on nats://', () => {
  it("shows the fleet's tasks and lease marks from the bus", async () => {
    f = spawnFleet();
    execFileSync('git', ['init', '-q'], { cwd: f.project });
    personBus(f.env.XDG_CONFIG_HOME!, 'nats', server);
    expect((await f.flotilla(['task', 'add', 'write the parser'])).stdout).toBe('t1');
    expect((await f.flotilla(['task', 'add', 'test the parser', '--blocked-by', 't1'])).stdout).toBe('t2');
    agent('a-0', '$F lease take shared.txt --why first > out 2>&1 && $F task claim t1 >> out 2>&1; echo $? > rc');
    await eventually(() => read('rc') !== undefined, 60_000, 'a-0 to lease and claim');
    expect(read('rc'), read('out')).toBe('0');
    // Kept on the bus: this host's fleet root has no board and no lease file.
    expect(existsSync(f.layout.leasesDir)).toBe(false);
    expect(existsSync(f.layout.board('fleet').dir)).toBe(false);
    await openDashboard(f.tmux, { session: 'dash', width: 160, height: 24, cwd: f.project, env: f.env });
    await f.tmux.waitFor(DASH, /a-0.*⚿ shared\.txt/);
    await f.tmux.tmux('send-keys', '-t', DASH, 't');
    const screen = await f.tmux.waitFor(DASH, /claimed\s+fleet\/t1\s+a-0\s+-\s+\d+s\s+write the parser/);
    expect(screen).toMatch(/open\s+fleet\/t2\s+-\s+t1\s+\d+s\s+test the parser/);
    expect(screen).toMatch(/tasks\s+1 open, 1 claimed, 0 done/);
  }, 180_000);
});
