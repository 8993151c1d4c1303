import { execa } from 'execa';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { isAlive, spawnFleet, type SpawnFleet } from './helpers.js';
import { requireTool } from '../helpers/requires.js';

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const CLI = '"$FLOTILLA_NODE" "$FLOTILLA_CLI"';
/** One probe: runs `cmd` in the agent's sandboxed shell and appends `name:ESCAPED` or `name:blocked`. */
const probe = (name: string, cmd: string) =>
  `if ( ${cmd} ) >/dev/null 2>&1; then echo ${name}:ESCAPED; else echo ${name}:blocked; fi >> probe.txt`;

function procState(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[0]!;
}

/**
 * A real harness with `security.sandbox: bubblewrap`, in real tmux, whose scripted
 * model runs shell commands that try to leave the sandbox, next to a second (victim) agent.
 * Each escape must fail; an ordinary command must work, and so must `flotilla send` to the
 * parent (through the harness's door: the fleet root is read-only inside).
 */
// The sandbox is what these tests prove: without bwrap, fail saying what to install.
beforeAll(() => {
  requireTool('bwrap');
});

describe('a sandboxed agent end to end', () => {
  it('cannot kill or read another agent, write host-executed paths or the fleet, or remount; can work and send to its parent', async () => {
    f = spawnFleet({
      config: 'security:\n  sandbox: bubblewrap\n',
      definitions: { prober: 'run-prompt.yaml', victim: 'sleeper.yaml', worker: 'worker.yaml' },
    });
    await execa('git', ['init', '-q', f.project]);
    mkdirSync(join(f.project, '.claude', 'agents'), { recursive: true });

    expect((await f.spawnAgent(['--agent', 'victim', '--id', 'vic', 'sleep'])).exitCode).toBe(0);
    const victim: number = await eventually(
      () => {
        const r = f!.records().find((x) => x.id === 'vic');
        return r?.status === 'working' && typeof r.pid === 'number' && existsSync(f!.layout.door('vic'))
          ? r.pid
          : false;
      },
      60_000,
      'the victim to run with its door open',
    );
    const vpid = victim;
    // A secret handoff socket answers whoever connects (§11): it must not be reachable inside.
    const handoff = createServer((s) => s.end('{"ok":true,"message":"approved"}\n'));
    mkdirSync(f.layout.secretsDir, { recursive: true });
    await new Promise<void>((resolve) => handoff.listen(f!.layout.secretSocket('req-1'), resolve));

    const command = [
      probe('kill', `kill -9 ${vpid}`),
      probe('stop', `kill -STOP ${vpid}`),
      probe('environ', `cat /proc/${vpid}/environ`),
      probe('claude-agents', 'echo evil > .claude/agents/evil.md'),
      probe('git-hooks', 'echo evil > .git/hooks/pre-commit'),
      probe('git-config', 'echo evil >> .git/config'),
      probe('fleet-agents', 'echo evil > .flotilla/agents/evil.md'),
      probe('fleet-record', `echo '{}' > .flotilla/state/agents/vic.json`),
      probe('raw-inbox', 'echo evil > .flotilla/state/inbox/human/new/evil.md'),
      probe('marker', 'touch .flotilla/state/markers/evil'),
      probe('remount', 'mount -o remount,rw /'),
      probe('secret-socket', `test -S ${f.layout.secretSocket('req-1')}`),
      probe('other-door', `FLOTILLA_DOOR=${f.layout.door('vic')} ${CLI} send human as-the-victim`),
      // Fleet commands go through the door (door-e2e.test.ts); without it the fleet is read-only.
      probe('spawn', `env -u FLOTILLA_DOOR ${CLI} spawn --oneshot --agent worker --id w-escaped hi`),
      'echo ordinary > ordinary.txt',
      `${CLI} send parent hello-from-the-sandbox > send.out 2>&1; echo "send:$?" >> probe.txt`,
      `FLOTILLA_AGENT_ID=vic ${CLI} send human forged-as-victim > forged.out 2>&1; echo "forged:$?" >> probe.txt`,
      'echo probes-done',
    ].join('\n');
    const r = await f.spawnAgent(['--wait', '--agent', 'prober', '--id', 'pr', command]);
    handoff.close();
    expect(r.stdout).toContain('probes-done');

    const results = Object.fromEntries(
      readFileSync(join(f.project, 'probe.txt'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(':') as [string, string]),
    );
    expect(results).toEqual({
      kill: 'blocked',
      stop: 'blocked',
      environ: 'blocked',
      'claude-agents': 'blocked',
      'git-hooks': 'blocked',
      'git-config': 'blocked',
      'fleet-agents': 'blocked',
      'fleet-record': 'blocked',
      'raw-inbox': 'blocked',
      marker: 'blocked',
      remount: 'blocked',
      'secret-socket': 'blocked',
      'other-door': 'blocked',
      spawn: 'blocked',
      send: '0',
      forged: '0',
    });

    // The victim lives on, not stopped; nothing reached the host's executed paths or the fleet.
    expect(isAlive(vpid)).toBe(true);
    expect(procState(vpid)).not.toBe('T');
    for (const p of [
      '.claude/agents/evil.md',
      '.git/hooks/pre-commit',
      '.flotilla/agents/evil.md',
      '.flotilla/state/markers/evil',
    ])
      expect(existsSync(join(f.project, p))).toBe(false);
    expect(readFileSync(join(f.project, '.git', 'config'), 'utf8')).not.toContain('evil');
    expect(f.record('vic').status).toBe('working');
    expect(
      f
        .records()
        .map((x) => x.id)
        .sort(),
    ).toEqual(['pr', 'vic']);

    // The ordinary command worked, and both sends arrived as the prober (a root: its parent is human).
    expect(readFileSync(join(f.project, 'ordinary.txt'), 'utf8')).toBe('ordinary\n');
    const human = f.mail('human').filter((m) => m.kind === 'message');
    expect(human.map((m) => [m.from, m.to, (m.body ?? '').trim()]).sort()).toEqual([
      ['pr', 'human', 'forged-as-victim'],
      ['pr', 'human', 'hello-from-the-sandbox'],
    ]);
    expect(readFileSync(join(f.project, 'send.out'), 'utf8').trim()).toMatch(/^[0-9a-z]{19}$/);
  }, 240_000);
});
