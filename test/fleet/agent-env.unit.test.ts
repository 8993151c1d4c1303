import { readlinkSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agentEnvironment, pathWithTools } from '../../src/fleet/agent-env.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import { layoutFor } from '../../src/layout/layout.js';
import { CLI_ENTRY, TOOLS_DIR } from '../../src/layout/package.js';
import { childEnvironment } from '../../src/spawn/child-command.js';
import { recordInput } from '../helpers/records.js';

const layout = layoutFor('/tmp/flotilla-env-test/.flotilla');
const child = recordInput('worker-abc123', { parentId: 'lead-xyz789', rootId: 'lead-xyz789', depth: 1 }) as AgentRecord;

describe('the one child-environment builder', () => {
  it("names the agent, its fleet, depth and parent, the same Node and CLI, and spawn-agent's folder first", () => {
    expect(agentEnvironment(layout, child, '/usr/bin:/bin')).toEqual({
      FLOTILLA_ROOT: layout.root,
      FLOTILLA_AGENT_ID: 'worker-abc123',
      FLOTILLA_DEPTH: '1',
      FLOTILLA_PARENT_ID: 'lead-xyz789',
      FLOTILLA_NODE: process.execPath,
      FLOTILLA_CLI: CLI_ENTRY,
      PATH: `${TOOLS_DIR}:/usr/bin:/bin`,
      FLOTILLA_BOARD: 'fleet',
      // Linux: the namespace whose /proc shows the fleet's processes (fleet/proc.ts procShowsFleet).
      ...(process.platform === 'linux'
        ? { FLOTILLA_PIDNS: process.env.FLOTILLA_PIDNS || readlinkSync('/proc/self/ns/pid') }
        : {}),
      GIT_AUTHOR_NAME: 'worker-abc123',
      GIT_AUTHOR_EMAIL: 'worker-abc123@flotilla',
      GIT_COMMITTER_NAME: 'worker-abc123',
      GIT_COMMITTER_EMAIL: 'worker-abc123@flotilla',
    });
    expect(agentEnvironment(layout, { ...child, board: 'backend' }, '/usr/bin').FLOTILLA_BOARD).toBe('backend');
  });

  it('keeps PATH the same length down a chain of agents, each directory once', () => {
    let path = '/usr/bin:/bin:/usr/bin';
    for (let depth = 0; depth < 4; depth++) path = pathWithTools(path);
    expect(path).toBe(`${TOOLS_DIR}:/usr/bin:/bin`);
    expect(pathWithTools(undefined)).toBe(TOOLS_DIR);
  });

  it("a spawned child gets the spawner's settings but never the spawner's identity", () => {
    const spawner = {
      PATH: `/usr/bin:${TOOLS_DIR}`,
      HOME: '/home/x',
      SECRET_TOKEN: 'nope',
      XDG_CONFIG_HOME: '/cfg',
      FLOTILLA_LIMITS_MAX_DEPTH: '2',
      FLOTILLA_AGENT_ID: 'lead-xyz789',
      FLOTILLA_DEPTH: '0',
      FLOTILLA_SLOT: 'old',
      FLOTILLA_ROOT: '/elsewhere',
    };
    const env = childEnvironment(layout, child, 'slot-token', spawner);
    expect(env).toEqual({
      ...agentEnvironment(layout, child, spawner.PATH),
      FLOTILLA_LIMITS_MAX_DEPTH: '2',
      XDG_CONFIG_HOME: '/cfg',
      FLOTILLA_SLOT: 'slot-token',
    });
    expect(env.PATH).toBe(`${TOOLS_DIR}:/usr/bin`);
  });

  it("never passes on the bus's credentials it is told to hide: they go to tmux, and reach the harness through its key file", () => {
    const spawner = {
      FLOTILLA_NATS_TOKEN: 't',
      FLOTILLA_NATS_USER: 'u',
      FLOTILLA_NATS_PASSWORD: 'p',
      FLOTILLA_FLEET_BUS: 'nats://h:4222',
    };
    const env = childEnvironment(layout, child, 'slot-token', spawner, [
      'FLOTILLA_NATS_TOKEN',
      'FLOTILLA_NATS_USER',
      'FLOTILLA_NATS_PASSWORD',
    ]);
    expect(Object.keys(env).filter((k) => k.startsWith('FLOTILLA_NATS_'))).toEqual([]);
    expect(env.FLOTILLA_FLEET_BUS).toBe('nats://h:4222');
  });
});
