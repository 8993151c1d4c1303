import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { listRecords } from '../../src/fleet/registry.js';
import { CLI, flotilla } from '../helpers/cli.js';
import { agentsExited, tempFleet, type TempFleet } from '../helpers/fleet.js';
import { fixture, scriptCalls } from '../helpers/scripts.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';

/** The deny list decides before anyone is asked; opaque commands ask, or are denied headless. */

let fleet: TempFleet;
let tmux: TmuxServer | undefined;
afterEach(async () => {
  await tmux?.kill();
  tmux = undefined;
  if (fleet) await agentsExited(fleet.layout);
  fleet?.cleanup();
});

const toolCalls = () => readAudit(fleet.layout, { event: 'tool_call' }).lines as unknown as Record<string, unknown>[];

describe('decision order in a real pane (permission mode default)', () => {
  it('sudo rm -rf / is refused without a question; a plain command asks; an opaque one asks again after "always"', async () => {
    fleet = tempFleet();
    tmux = tmuxServer();
    const log = join(fleet.project, 'calls.jsonl');
    const env = {
      FLOTILLA_ROOT: fleet.layout.root,
      FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'default',
      FLOTILLA_SCRIPT_LOG: log,
      NO_COLOR: '1',
    };
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    await tmux.tmux(
      'new-session',
      '-d',
      '-s',
      'agent',
      '-x',
      '160',
      '-y',
      '40',
      '-c',
      fleet.project,
      ...envArgs,
      process.execPath,
      CLI,
      'run',
      '--model',
      `script:${fixture('harness/gate-order.yaml')}`,
    );
    await tmux.waitFor('agent', /›/);
    await tmux.tmux('send-keys', '-t', 'agent', 'go', 'Enter');

    // The first question is about the plain command: the denied one never reached a person.
    const screen = await tmux.waitFor('agent', /Allow shell: \$ echo plain-ran/);
    expect(screen).not.toMatch(/Allow shell: \$ sudo/);
    expect(screen).toMatch(
      /Gate said: Tool call denied: the shell gate refuses it \(deny-list rule `rm -r \/`, matched `rm -rf \/`: it deletes or opens up every file of the machine or of the home folder\); it was not run and no person was asked/,
    );
    await tmux.tmux('send-keys', '-t', 'agent', 'a', 'Enter');
    // "Always" covers commands a person could judge, not an opaque one.
    await tmux.waitFor('agent', /Allow shell: \$ echo 'echo opaque-ran' \| sh/);
    await tmux.tmux('send-keys', '-t', 'agent', 'y', 'Enter');
    await tmux.waitFor('agent', /Finally: opaque-ran/);

    const denied = scriptCalls(log)[1]!;
    expect(JSON.stringify(denied)).toMatch(/no person was asked/);
    const approvals = readAudit(fleet.layout, { event: 'approval' }).lines;
    expect(approvals).toHaveLength(2);
    expect(toolCalls().map((l) => [l.command, l.decision, l.shell, l.rule])).toEqual([
      ['sudo rm -rf /', 'deny', 'deny', 'deny_commands:rm -r /'],
      ['echo plain-ran', 'ask→approved', 'plain', 'default'],
      ["echo 'echo opaque-ran' | sh", 'ask→approved', 'opaque', 'default'],
    ]);
    // The answer streams to the pane before the task's end is recorded.
    await eventually(
      () => listRecords(fleet.layout)[0]!.status === 'idle',
      30_000,
      'the agent to be idle after its task',
    );
  }, 180_000);
});

describe('opaque commands with nobody to ask', () => {
  const run = (mode: string, extra: Record<string, string> = {}) =>
    flotilla(['run', '--model', `script:${fixture('harness/opaque-shell.yaml')}`, 'go'], {
      cwd: fleet.project,
      env: { FLOTILLA_ROOT: fleet.layout.root, FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: mode, ...extra },
    });

  it('headless in default mode: denied, and the model reads why', async () => {
    fleet = tempFleet();
    const r = await run('default');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(
      /^Model read: Tool call denied: the shell gate cannot tell statically what it runs \(text from a pipe is run by sh\), so it needs a person's approval and nobody can answer here\./,
    );
    expect(existsSync(join(fleet.project, 'ran.txt'))).toBe(false);
    expect(toolCalls()).toEqual([expect.objectContaining({ decision: 'deny', rule: 'no-approver', shell: 'opaque' })]);
  }, 180_000);

  it('dont_ask runs it and the audit marks it opaque; security.opaque_commands: deny refuses it', async () => {
    fleet = tempFleet();
    const r = await run('dont_ask');
    expect(r.stdout).toMatch(/^Model read: done/);
    expect(readFileSync(join(fleet.project, 'ran.txt'), 'utf8')).toBe('opaque-ran\n');
    expect(toolCalls()).toEqual([
      expect.objectContaining({ decision: 'opaque', shell: 'opaque', opaque_reason: 'text from a pipe is run by sh' }),
    ]);

    const refused = await run('dont_ask', { FLOTILLA_SECURITY_OPAQUE_COMMANDS: 'deny' });
    expect(refused.stdout).toMatch(/security\.opaque_commands is 'deny'/);
    await eventually(() => toolCalls().length === 2, 5_000, 'the second audit line');
    expect(toolCalls()[1]).toMatchObject({ decision: 'deny', rule: 'opaque_commands' });
  }, 240_000);
});
