import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

let f: SpawnFleet | undefined;
let server: NatsServer | undefined;
afterEach(async () => {
  await f?.close();
  await server?.kill();
  f = undefined;
  server = undefined;
});

const TOKEN = 'harness-only-token-0d5e';
const CREDS = { FLOTILLA_NATS_TOKEN: TOKEN };

/**
 * Bus credentials belong to harnesses (docs/security-fleet.md "Bus credentials"): on a nats:// bus
 * with a token, the spawner hands the token to the harness through its key file; neither
 * tmux (the server's environment, the session's) nor the harness's /proc environment nor any
 * command the agent runs holds it — with the sandbox and without, where a command has the
 * network — while the agent's `flotilla send`, `spawn-agent` and `flotilla status` from its
 * shell still work, through its harness's door.
 */
describe.each(['none', 'bubblewrap'] as const)(
  'bus credentials with sandbox %s (real nats-server with a token)',
  (sandbox) => {
    it("no command, pane or tmux environment holds the token; the agent's shell still sends, spawns and reads status", async () => {
      server = await natsServer({ token: TOKEN });
      f = spawnFleet({
        definitions: { shelly: 'bus-shell.yaml', worker: 'worker.yaml' },
        config: `security:\n  sandbox: ${sandbox}\n`,
      });
      mkdirSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla'), { recursive: true });
      writeFileSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml'), `fleet:\n  bus: ${server.url}\n`);

      const s = await f.spawnAgent(['--agent', 'shelly', '--id', 'shelly', 'use the fleet'], CREDS);
      expect(s.exitCode, s.stderr).toBe(0);
      await eventually(() => f!.record('shelly').lastLine.startsWith('shell done'), 60_000, 'the shell command run');

      // The command's environment: its door, no token.
      const cmdEnv = readFileSync(join(f.project, 'shell-env.txt'), 'utf8');
      expect(cmdEnv).toMatch(/^FLOTILLA_DOOR=/m);
      expect(cmdEnv).not.toContain('FLOTILLA_NATS_TOKEN');
      expect(cmdEnv).not.toContain(TOKEN);

      // Its `flotilla send` reached the person over the bus, from the agent.
      const mail = await eventually(
        async () => {
          const r = await f!.flotilla(['inbox', 'human', '--all', '--json'], CREDS);
          const all = JSON.parse(r.stdout || '[]') as { id: string; kind: string; from: string }[];
          return all.find((m) => m.from === 'shelly' && m.kind === 'message');
        },
        60_000,
        "the shell's message to the person",
      );
      const read = await f.flotilla(['inbox', 'human', '--read', mail.id, '--peek', '--json'], CREDS);
      expect((JSON.parse(read.stdout) as { body: string }).body).toContain('from the shell');
      // Its spawn-agent made its child, and its status read the bus.
      await eventually(
        () => f!.records().some((r) => r.id === 'shell-kid'),
        60_000,
        'the child spawned from the shell',
      );
      expect(f.record('shell-kid').parentId).toBe('shelly');
      expect(readFileSync(join(f.project, 'status.txt'), 'utf8')).toMatch(/Bus: reachable — nats:\/\//);

      // Neither tmux nor the harness's process environment holds the token.
      const rec = f.record('shelly');
      for (const args of [
        ['show-environment', '-g'],
        ['show-environment', '-t', rec.tmux!.sessionId],
      ]) {
        expect(await f.tmux.tmux(...args)).not.toContain(TOKEN);
      }
      expect(readFileSync(`/proc/${rec.pid!}/environ`, 'utf8')).not.toContain(TOKEN);
    }, 180_000);
  },
);

/**
 * The reaper a pane-died hook runs lives in the fleet's tmux server, which a spawn starts
 * without the bus's credentials: a harness killed on a bus with a token still has its record
 * ended, and its completion — which that reaper cannot publish — waits in the host's
 * outbox until a process holding the token (here the person's `inbox`) publishes it.
 */
it('a harness killed on a token bus: ended by the reaper; its completion reaches the person through the outbox', async () => {
  server = await natsServer({ token: TOKEN });
  f = spawnFleet({ definitions: { sleeper: 'sleeper.yaml' } });
  mkdirSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla'), { recursive: true });
  writeFileSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml'), `fleet:\n  bus: ${server.url}\n`);
  const s = await f.spawnAgent(['--agent', 'sleeper', '--id', 'killed', 'sleep'], CREDS);
  expect(s.exitCode, s.stderr).toBe(0);
  await eventually(() => f!.record('killed').status === 'working', 60_000, 'the agent working');
  process.kill(f.record('killed').pid!, 'SIGKILL');
  // tmux can miss a pane's exit until its next SIGCHLD (test/helpers/tmux.ts `nudge`): the hook then waits.
  await eventually(
    async () => {
      await f!.tmux.nudge();
      return f!.record('killed').status === 'crashed';
    },
    60_000,
    'the record ended by the reaper',
  );
  const done = await eventually(
    async () => {
      const r = await f!.flotilla(['inbox', 'human', '--all', '--json'], CREDS);
      return (JSON.parse(r.stdout || '[]') as { kind: string; from: string; status: string }[]).find(
        (m) => m.kind === 'completion' && m.from === 'killed',
      );
    },
    90_000,
    'the completion over the bus',
  );
  expect(done.status).toBe('crashed');
}, 180_000);
