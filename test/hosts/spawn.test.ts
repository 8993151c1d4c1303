import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { startSshd } from '../helpers/sshd.js';
import { trustProject } from '../helpers/trust.js';
import { fixture } from '../spawn/helpers.js';
import { twoHosts, type TwoHosts } from './helpers.js';

/**
 * `spawn-agent --host NAME` (docs/design.md §17): a person's spawn opens the agent in a tmux
 * window on the other host — a real sshd, that host's own fleet root and tmux server, the
 * scripted model there — and prints its id as a local spawn does.
 */
let pair: TwoHosts | undefined;
afterEach(async () => {
  await pair?.close();
  pair = undefined;
});

describe('spawn-agent --host', { timeout: 300_000 }, () => {
  it("opens the agent in the other host's tmux, prints its id, and its model there gets the task", async () => {
    pair = await twoHosts({ remoteDefinitions: { worker: 'worker.yaml' } });
    const { local, remote } = pair;
    const r = await local.spawnAgent(['--host', 'r1', '--agent', 'worker', 'count the files in "src" (it\'s $HOME)']);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const id = r.stdout;
    expect(id).toMatch(/^worker-[a-z0-9]{6}$/);
    // It lives there, not here: its record, its window on that host's tmux server, its answer.
    expect(local.records()).toEqual([]);
    expect(await remote.windows()).toContain(id);
    const done = await eventually(
      () => remote.record(id).turns >= 2 && remote.record(id),
      60_000,
      'the remote agent to answer',
    );
    expect(done.depth).toBe(0);
    expect(done.cwd).toBe(remote.project);
    const transcript = readFileSync(remote.layout.transcript(id), 'utf8');
    expect(transcript).toContain('count the files in \\"src\\" (it\'s $HOME)');
    const out = await eventually(
      async () => {
        const o = await remote.flotilla(['output', id]);
        return o.exitCode === 0 && o.stdout;
      },
      60_000,
      'its answer',
    );
    expect(out).toContain(`Answer: result-of-${id}`);
    // Its completion went to the person on that host, once.
    expect(remote.mail('human').filter((m) => m.kind === 'completion' && m.from === id)).toHaveLength(1);
  });

  it('--wait prints the answer from the other host and exits as the agent ended', async () => {
    pair = await twoHosts({ remoteDefinitions: { worker: 'worker.yaml' } });
    const r = await pair.local.spawnAgent([
      '--host',
      'r1',
      '--agent',
      'worker',
      '--oneshot',
      '--id',
      'far-1',
      '--wait',
      'work',
    ]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('Answer: result-of-far-1');
    expect(pair.remote.record('far-1').status).toBe('completed');
  });

  it('refuses, with one line saying what to do, an unknown host and one ssh cannot reach', async () => {
    const closed = await startSshd();
    const port = closed.port;
    await closed.kill();
    pair = await twoHosts({ port, remoteDefinitions: { worker: 'worker.yaml' } });
    const down = await pair.local.spawnAgent(['--host', 'r1', '--agent', 'worker', 'work']);
    expect(down.exitCode).toBe(1);
    expect(down.stderr).toMatch(
      /^flotilla: host 'r1' \(root@127\.0\.0\.1\) is unreachable: .*(refused|closed).* — check that 'ssh -o BatchMode=yes root@127\.0\.0\.1 true' works without a prompt \(hosts\.r1 in config\.yaml\)$/,
    );
    const unknown = await pair.local.spawnAgent(['--host', 'gpu9', 'work']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toBe(
      "flotilla: no host 'gpu9' in the config — known hosts: r1; add it under hosts: in config.yaml (hosts: {gpu9: {ssh: user@machine}})",
    );
    expect(pair.remote.records()).toEqual([]);
  });

  it("refuses an agent's spawn on another host while fleet.bus is maildir, saying to set fleet.bus", async () => {
    pair = await twoHosts({
      remoteDefinitions: { worker: 'worker.yaml' },
      localDefinitions: { spawner: 'host-spawner.yaml', worker: 'worker.yaml' },
    });
    const r = await pair.local.spawnAgent(['--agent', 'spawner', '--oneshot', '--wait', 'go']);
    expect(r.stdout).toMatch(
      /^got: flotilla: spawn refused: spawner-[a-z0-9]{6} is an agent, and its child on host 'r1' could reach it only over the fleet's bus, which is maildir here — set fleet\.bus: nats:\/\/… and the same fleet\.name on both hosts \(docs\/scale-out\.md\), or spawn here/,
    );
    expect(r.stdout).toContain('[flotilla:host-refused agent=spawner-');
    expect(r.stdout).toContain('exit=1');
    expect(pair.remote.records()).toEqual([]);
  });

  it("a definition's host: opens it there; --host local keeps it here", async () => {
    pair = await twoHosts({ remoteDefinitions: { worker: 'worker.yaml' } });
    const { local, remote } = pair;
    writeFileSync(
      join(local.layout.agentsDir, 'worker.md'),
      `---\nname: worker\ndescription: runs on r1\nhost: r1\nmodel: script:${fixture('worker.yaml')}\n---\nYou work far away.\n`,
    );
    trustProject(local.project, local.env);
    const far = await local.spawnAgent(['--agent', 'worker', '--oneshot', '--id', 'far-2', '--wait', 'work']);
    expect(far.stderr).toBe('');
    expect(far.exitCode).toBe(0);
    expect(far.stdout).toBe('Answer: result-of-far-2');
    expect(remote.record('far-2').status).toBe('completed');
    expect(local.records()).toEqual([]);

    const here = await local.spawnAgent([
      '--agent',
      'worker',
      '--host',
      'local',
      '--oneshot',
      '--id',
      'near-1',
      '--wait',
      'work',
    ]);
    expect(here.exitCode).toBe(0);
    expect(here.stdout).toBe('Answer: result-of-near-1');
    expect(local.records().map((x) => x.id)).toEqual(['near-1']);
  });

  it("refuses --lineage from an agent's command and a malformed one from a person, and a child for a host on maildir", async () => {
    pair = await twoHosts({
      localDefinitions: { forger: '../hosts/lineage-forger.yaml' },
      remoteDefinitions: { worker: 'worker.yaml' },
    });
    const { local, remote } = pair;
    const r = await local.spawnAgent(['--agent', 'forger', '--oneshot', '--wait', 'go']);
    expect(r.stdout).toMatch(
      /^got: flotilla: --lineage is refused through the door: it is written by Flotilla for a spawn on another host — drop it; spawn-agent --host NAME makes your child there exit=2/,
    );
    const bad = await remote.spawnAgent(['--lineage', '{"v":1}', 'work']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toBe(
      "flotilla: spawn refused: --lineage is not a lineage of this version — it is written by another host's Flotilla over ssh, never by hand",
    );
    // A well-formed lineage reaching a host whose bus is maildir: its completion could never go back.
    const forger = local.records()[0]!;
    const lineage = JSON.stringify({
      v: 1,
      host: 'elsewhere',
      parent: forger,
      limits: { max_depth: 3, max_children: 4, max_spawns_per_tree: 32 },
    });
    const nobus = await remote.spawnAgent(['--lineage', lineage, '--agent', 'worker', 'work']);
    expect(nobus.exitCode).toBe(1);
    expect(nobus.stderr).toMatch(
      /^flotilla: spawn refused: forger-[a-z0-9]{6} on host 'elsewhere' asked for a child here, but this host's fleet\.bus is maildir, which cannot carry its completion back — set fleet\.bus .*\n\[flotilla:host-no-bus parent=forger-[a-z0-9]{6} host=elsewhere\]$/,
    );
    expect(remote.records()).toEqual([]);
    expect(local.records()).toHaveLength(1);
  });
});
