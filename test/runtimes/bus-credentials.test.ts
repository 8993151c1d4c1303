import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { eventually } from '../helpers/tmux.js';
import { fixture } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

const TOKEN = 'shim-only-token-7c21';

let server: NatsServer | undefined;
const fleets = vendorFleets(async () => {
  await server?.kill();
  server = undefined;
});

/**
 * A vendor CLI on a bus with a token (docs/security-fleet.md "Bus credentials"): Claude Code, the
 * pinned CLI against the fake vendor API, runs `env` and `spawn-agent` in its shell tool
 * (bus-probe.yaml). The command holds no token, outside the sandbox and inside it, yet its
 * spawn makes the child on the bus and the CLI's task ends with a completion to the parent
 * over the bus — the fleet commands go through the agent's door, whose shim holds the token.
 */
describe('a vendor CLI holds no bus credentials; its hooks still reach the bus', { timeout: 600_000 }, () => {
  it.each(['none', 'bubblewrap'] as const)('claude, sandbox %s', async (sandbox) => {
    server = await natsServer({ token: TOKEN });
    const t = TARGETS.claude();
    const f = await fleets.open({
      ...t,
      env: (url) => ({ ...t.env(url), FLOTILLA_NATS_TOKEN: TOKEN }),
      script: 'bus-probe.yaml',
      config: `security:\n  sandbox: ${sandbox}\n`,
      definitions: { a: DONT_ASK },
    });
    mkdirSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla'), { recursive: true });
    writeFileSync(join(f.env.XDG_CONFIG_HOME!, 'flotilla', 'config.yaml'), `fleet:\n  bus: ${server.url}\n`);
    // The child the CLI's command spawns: a scripted flotilla agent.
    copyFileSync(fixture('worker.yaml'), join(f.project, 'kid.yaml'));
    const id = await f.spawnChild('a', `claude-bus-${sandbox}`, 'look around', t.spawnArgs);

    // The completion travels the bus to the parent (this test process, registered).
    const done = await eventually(
      async () => {
        const r = await f.flotilla(['inbox', 'lead-parent', '--all', '--json']);
        const mail = JSON.parse(r.stdout || '[]') as { kind: string; from: string; status: string }[];
        return mail.find((m) => m.kind === 'completion' && m.from === id);
      },
      480_000,
      'the completion over the bus',
    );
    expect(done.status).toBe('completed');
    // Published, not left waiting for a process with the token. The sender unlinks its outbox copy once the bus has
    // acknowledged it, which can come a moment after the parent was fed the message: gone soon, not at once.
    const outbox = () => {
      try {
        return readdirSync(join(f.layout.outbox, 'new'));
      } catch {
        return [];
      }
    };
    await eventually(() => outbox().length === 0, 30_000, 'the outbox emptied');

    const env = readFileSync(join(f.project, 'probe-env.txt'), 'utf8');
    expect(env).toContain(`FLOTILLA_AGENT_ID=${id}`);
    expect(env).not.toContain('FLOTILLA_NATS_TOKEN');
    expect(env).not.toContain(TOKEN);
    // Its spawn-agent made the child, this agent's, which ran on the bus.
    expect(readFileSync(join(f.project, 'spawned.txt'), 'utf8')).toContain('spawn:0');
    expect(f.record('bus-kid').parentId).toBe(id);
    await eventually(
      async () => {
        const r = await f.flotilla(['inbox', id, '--all', '--json']);
        return (JSON.parse(r.stdout || '[]') as { kind: string; from: string }[]).some(
          (m) => m.kind === 'completion' && m.from === 'bus-kid',
        );
      },
      120_000,
      "the child's completion to the CLI's agent",
    );
  });
});
