import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { encodeLineage } from '../../src/hosts/lineage.js';
import { eventually } from '../helpers/tmux.js';
import { hostsOnBus } from './helpers.js';

/**
 * `flotilla cancel --tree` of a tree with a child on another host (docs/design.md §17.7): two
 * hosts on one real nats-server, r1 reached only through a real sshd. The root runs here; its
 * child, opened on r1 as its child (`flotilla spawn --lineage` there, as a spawn from here does),
 * is cancelled there too.
 */
const hosts = hostsOnBus();

describe('cancel --tree across hosts', { timeout: 300_000 }, () => {
  it("cancels the tree's child on another host there, and says so", async () => {
    const { local, remote } = await hosts.open({
      localDefinitions: { idle: 'idle-worker.yaml' },
      remoteDefinitions: { idle: 'idle-worker.yaml' },
    });
    expect((await local.spawnAgent(['--id', 'R', '--agent', 'idle', 'start'])).exitCode).toBe(0);
    const root = await eventually(
      () => {
        const r = local.record('R');
        return r.status === 'idle' ? r : undefined;
      },
      60_000,
      'R idle',
    );
    const lineage = encodeLineage('here', root, defaultConfig().limits);
    const spawned = await remote.flotilla(['spawn', '--lineage', lineage, '--agent', 'idle', '--id', 'K', 'work']);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    await eventually(() => remote.record('K').status === 'idle', 60_000, 'K idle on r1');

    const cancelled = await local.flotilla(['cancel', 'R', '--tree']);
    expect(cancelled.stderr).toBe('');
    expect(cancelled.exitCode).toBe(0);
    expect(cancelled.stdout).toBe('cancelled R, K');
    expect(remote.record('K').status).toBe('cancelled');
    expect(local.record('R').status).toBe('cancelled');
  });
});
