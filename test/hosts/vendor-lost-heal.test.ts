import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { closeBuses } from '../../src/bus/open.js';
import { MARKED_LOST_REASON } from '../../src/lifecycle/lost.js';
import { shimHosts } from '../../src/fleet/shim-hosts.js';
import { claude } from '../../src/runtimes/claude.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';
import { pinnedRuntimeBinary, vendorFleet, type VendorFleet } from '../runtimes/helpers.js';

/**
 * A Claude Code agent (the pinned CLI, started by spawn-agent as a person's spawn is, against
 * a fake Anthropic API) whose host falls silent on a `nats://` bus (design §17.8): another
 * host marks it lost and its parent is told once; when its host is heard again it ends itself,
 * and its own ending sends no second notice.
 */
describe(
  'a vendor agent marked lost while its host was silent (real nats-server, two hosts by name)',
  { timeout: 300_000 },
  () => {
    let server: NatsServer;
    let b: VendorFleet | undefined;
    let a: SpawnFleet | undefined;
    beforeAll(async () => {
      server = await natsServer();
    }, 120_000);
    afterAll(async () => {
      await server.kill();
    });
    afterEach(async () => {
      await closeBuses();
      await b?.dispose();
      await a?.close();
      b = a = undefined;
    });

    it('ends itself when its host is heard again; the parent gets one notice for the task, never the cancel', async () => {
      const bus = (host: string) =>
        `fleet:\n  bus: ${server.url}\n  name: nine\n  host: ${host}\n  lost_after_secs: 6\n`;
      b = await vendorFleet({
        runtime: claude,
        wire: 'anthropic',
        script: 'idle.yaml',
        bin: pinnedRuntimeBinary('claude'),
        env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_AUTH_TOKEN: 'fake-token-for-a-local-server' }),
        definitions: { a: '' },
        config: bus('b'),
      });
      // Host a: a live agent whose harness beats for a and looks for silent hosts.
      a = spawnFleet({ config: bus('a'), definitions: { worker: 'worker.yaml' } });
      expect((await a.spawnAgent(['--agent', 'worker', '--id', 'a-live', 'work'])).exitCode).toBe(0);
      const id = await b.spawnChild('a', 'claude-far', 'get ready');
      const notices = async () => {
        const r = await b!.flotilla(['inbox', 'lead-parent', '--all', '--json']);
        expect(r.exitCode, r.stderr).toBe(0);
        return (JSON.parse(r.stdout) as { kind: string; from: string; status: string }[]).filter(
          (m) => m.kind === 'completion' && m.from === id,
        );
      };
      await eventually(
        async () => (await notices()).length === 1 && b!.record(id).status === 'idle',
        240_000,
        'the first task answered, the agent idle',
      );

      // b falls silent: the shim host (which beats for b's agents), the agent's pane process and b's tmux server
      // (which would wake a stopped pane) stopped.
      const tmuxPid = Number((await b.tmux.tmux('display-message', '-p', '#{pid}')).trim());
      const [host] = shimHosts(b.layout).map((h) => h.pid);
      expect(host).toBeDefined();
      const stopped = [tmuxPid, b.record(id).pid!, host!];
      for (const pid of stopped) process.kill(pid, 'SIGSTOP');
      try {
        await eventually(
          async () => (await notices()).some((m) => m.status === 'lost'),
          120_000,
          "the lost notice in the parent's inbox",
        ).catch((err: unknown) => {
          const marks = readAudit(a!.layout, { event: 'agent_lost' }).lines;
          throw new Error(`${String(err)}\nagent_lost on a: ${JSON.stringify(marks)}`);
        });
      } finally {
        for (const pid of stopped.reverse()) process.kill(pid, 'SIGCONT');
      }
      // Heard again, it ends itself; its own ending is not told a second time.
      // (An idle vendor agent ends `completed`, as when its window closes: its last task completed.)
      await eventually(() => b!.record(id).exitReason === MARKED_LOST_REASON, 120_000, 'the healed agent ended');
      expect(b.record(id).exitReason).toBe(MARKED_LOST_REASON);
      await eventually(async () => b!.cliPid(id) === undefined, 60_000, 'the CLI gone');
      const all = await notices();
      expect(all.map((m) => m.status).sort()).toEqual(['completed', 'lost']);
      // One process of a won the mark and told the parent.
      expect(readAudit(a.layout, { event: 'agent_lost' }).lines.filter((l) => l.agent === id)).toEqual([
        expect.objectContaining({ to: 'lead-parent', told: true, agent_host: 'b' }),
      ]);
    });
  },
);
