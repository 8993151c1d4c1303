import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { startSshd } from '../helpers/sshd.js';
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
    const done = await eventually(() => remote.record(id).turns >= 2 && remote.record(id), 60_000, 'the remote agent to answer');
    expect(done.depth).toBe(0);
    expect(done.cwd).toBe(remote.project);
    const transcript = readFileSync(remote.layout.transcript(id), 'utf8');
    expect(transcript).toContain('count the files in \\"src\\" (it\'s $HOME)');
    const out = await eventually(async () => {
      const o = await remote.flotilla(['output', id]);
      return o.exitCode === 0 && o.stdout;
    }, 60_000, 'its answer');
    expect(out).toContain(`Answer: result-of-${id}`);
    // Its completion went to the person on that host, once.
    expect(remote.mail('human').filter((m) => m.kind === 'completion' && m.from === id)).toHaveLength(1);
  });

  it('--wait prints the answer from the other host and exits as the agent ended', async () => {
    pair = await twoHosts({ remoteDefinitions: { worker: 'worker.yaml' } });
    const r = await pair.local.spawnAgent(['--host', 'r1', '--agent', 'worker', '--oneshot', '--id', 'far-1', '--wait', 'work']);
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
    expect(down.stderr).toMatch(/^flotilla: host 'r1' \(root@127\.0\.0\.1\) is unreachable: .*(refused|closed).* — check that 'ssh -o BatchMode=yes root@127\.0\.0\.1 true' works without a prompt \(hosts\.r1 in config\.yaml\)$/);
    const unknown = await pair.local.spawnAgent(['--host', 'gpu9', 'work']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toBe("flotilla: no host 'gpu9' in the config — known hosts: r1; add it under hosts: in config.yaml (hosts: {gpu9: {ssh: user@machine}})");
    expect(pair.remote.records()).toEqual([]);
  });

  it("refuses an agent's spawn on another host: its child would be outside its lineage, caps and budget", async () => {
    pair = await twoHosts({ remoteDefinitions: { worker: 'worker.yaml' }, localDefinitions: { spawner: 'host-spawner.yaml', worker: 'worker.yaml' } });
    const r = await pair.local.spawnAgent(['--agent', 'spawner', '--oneshot', '--wait', 'go']);
    expect(r.stdout).toMatch(/^got: flotilla: spawn refused: spawner-[a-z0-9]{6} is an agent, and an agent cannot open agents on another host yet — .* ask a person to run spawn-agent --host r1, or spawn here/);
    expect(r.stdout).toContain('[flotilla:host-refused agent=spawner-');
    expect(r.stdout).toContain('exit=1');
    expect(pair.remote.records()).toEqual([]);
  });
});
