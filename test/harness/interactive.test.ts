import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listRecords } from '../../src/fleet/registry.js';
import { CLI, flotilla } from '../helpers/cli.js';
import { closeTmuxFleet, tempFleet, type TempFleet } from '../helpers/fleet.js';
import { fixture, scriptCalls, userTexts } from '../helpers/scripts.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { runsWith } from '../tools/process-helpers.js';

let fleet: TempFleet;
let tmux: TmuxServer;
afterEach(() => closeTmuxFleet(tmux, fleet));

/**
 * Starts an interactive agent (`flotilla run` on a TTY) in a pane of a private tmux server;
 * `around`: a command the harness runs under, its command line appended.
 */
async function startAgent(
  script: string,
  extraEnv: Record<string, string> = {},
  around: string[] = [],
): Promise<{ log: string }> {
  fleet = tempFleet();
  tmux = tmuxServer();
  const log = join(fleet.project, 'calls.jsonl');
  const env = {
    FLOTILLA_ROOT: fleet.layout.root,
    FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'dont_ask',
    FLOTILLA_SCRIPT_LOG: log,
    NO_COLOR: '1',
    ...extraEnv,
  };
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  await tmux.tmux(
    'new-session',
    '-d',
    '-s',
    'agent',
    '-x',
    '100',
    '-y',
    '30',
    '-c',
    fleet.project,
    ...envArgs,
    ...around,
    process.execPath,
    CLI,
    'run',
    '--model',
    `script:${fixture(script)}`,
  );
  await tmux.waitFor('agent', /›/);
  return { log };
}

/**
 * A pane's sh that runs its arguments on the pane's terminal, passes its SIGHUP on (a trap interrupts `wait`, not a
 * command in the foreground), and writes their exit status to `exit-status`.
 */
const PASS_HUP_ON = [
  'exec 3<&0',
  '"$@" <&3 3<&- &',
  'pid=$!',
  'trap \'kill -HUP "$pid"\' HUP',
  'while :; do wait "$pid"; s=$?; kill -0 "$pid" 2>/dev/null || break; done',
  'echo "$s" > exit-status',
].join('\n');

function agentRecord() {
  const [rec] = listRecords(fleet.layout);
  return rec!;
}

describe('interactive agent in tmux', () => {
  it('a line typed while a tool runs is in the next model input', async () => {
    const { log } = await startAgent('harness/slow-tool.yaml');
    await tmux.tmux('send-keys', '-t', 'agent', 'count the files', 'Enter');
    await tmux.waitFor('agent', /\$ i=0; while/);
    await tmux.tmux('send-keys', '-t', 'agent', 'also check hidden ones', 'Enter');
    // The tool runs until the line is queued, so it cannot end first on a slow machine.
    await tmux.waitFor('agent', /\(queued: will be given to the agent at the next step\)/);
    writeFileSync(join(fleet.project, 'typed'), '');
    await tmux.waitFor('agent', /Saw: also check hidden ones/);
    const calls = scriptCalls(log);
    expect(calls).toHaveLength(2);
    expect(userTexts(calls[1]!).at(-1)).toBe('also check hidden ones');
    // The answer streams to the pane before the task's end is recorded.
    await eventually(() => agentRecord().status === 'idle', 30_000, 'the agent to go idle');
  });

  it('Ctrl-C stops a running sleep 60 within 2 s and the agent waits for input', async () => {
    const mark = `m${process.pid}${Date.now()}`;
    await startAgent('harness/sleep-forever.yaml', { MARK: mark });
    await tmux.tmux('send-keys', '-t', 'agent', 'sleep please', 'Enter');
    await eventually(() => runsWith(`never-${mark}`), 10_000, 'the sleep to start');
    await tmux.tmux('send-keys', '-t', 'agent', 'C-c');
    await eventually(() => !runsWith(`never-${mark}`), 2_000, 'the sleep to be killed');
    await eventually(() => agentRecord().status === 'idle', 5_000, 'the agent to go idle');
    expect(agentRecord().lastTask).toBeNull();
  });

  it('a message sent with flotilla send shows in the pane and in the next model input', async () => {
    const { log } = await startAgent('harness/mail.yaml');
    await tmux.tmux('send-keys', '-t', 'agent', 'wait for mail', 'Enter');
    await tmux.waitFor('agent', /Ready for mail\./);
    await eventually(() => agentRecord().status === 'idle', 5_000, 'idle');
    const sent = await flotilla(['send', agentRecord().id, '--summary', 'status check', 'the build is green'], {
      cwd: fleet.project,
      env: { FLOTILLA_ROOT: fleet.layout.root },
    });
    expect(sent.exitCode).toBe(0);
    const screen = await tmux.waitFor('agent', /Got mail:/);
    expect(screen).toMatch(/status check/);
    const last = scriptCalls(log).at(-1)!;
    const mail = userTexts(last).at(-1)!;
    expect(mail).toMatch(/^<inbox-message id="?[0-9a-z]+"? from="?human"? kind="?message"?/);
    expect(mail).toContain('the build is green');
  });

  it('closing the window ends the agent: terminal state, audit line, no crash', async () => {
    await startAgent('harness/mail.yaml');
    await tmux.tmux('send-keys', '-t', 'agent', 'hello', 'Enter');
    await tmux.waitFor('agent', /Ready for mail\./);
    await eventually(() => agentRecord().status === 'idle', 5_000, 'idle');
    // A second session keeps the server alive once the agent's window is gone.
    await tmux.tmux('new-session', '-d', '-s', 'keep');
    await tmux.tmux('kill-session', '-t', 'agent');
    await eventually(() => agentRecord().status === 'cancelled', 5_000, 'the agent to end');
    expect(agentRecord().exitReason).toBe('window closed');
    expect(agentRecord().lastTask?.status).toBe('completed');
    const { readAudit } = await import('../../src/audit/read.js');
    // The ending's audit line is its last step (harness/finish.ts), after the record, the claims and the stop hooks.
    const ends = () => readAudit(fleet.layout, { event: 'agent_end' }).lines;
    await eventually(() => ends().length > 0, 5_000, 'the agent_end audit line');
    expect(ends()).toEqual([
      expect.objectContaining({ agent: agentRecord().id, status: 'cancelled', reason: 'window closed' }),
    ]);
  });

  it('closing the window: the harness exits with its own status 1, not an abort of Node on the terminal gone', async () => {
    // The pane's sh outlives the window to write down how the harness ended, and passes the window's SIGHUP on to it
    // as the kernel does when an agent pane's sh dies with its window (src/spawn/pane-command.ts).
    await startAgent('harness/mail.yaml', {}, ['/bin/sh', '-c', PASS_HUP_ON, 'sh']);
    await tmux.tmux('send-keys', '-t', 'agent', 'hello', 'Enter');
    await tmux.waitFor('agent', /Ready for mail\./);
    await tmux.tmux('new-session', '-d', '-s', 'keep');
    await tmux.tmux('kill-session', '-t', 'agent');
    const status = join(fleet.project, 'exit-status');
    await eventually(() => existsSync(status), 30_000, 'the harness to exit');
    // Node 20 aborted here as it reset the terminal gone: 134 (SIGABRT), at times 139 (SIGSEGV).
    expect(readFileSync(status, 'utf8').trim()).toBe('1');
    expect(agentRecord().exitReason).toBe('window closed');
  });

  it('default mode: the pane asks before a shell command, and y typed there runs it', async () => {
    await startAgent('harness/asks.yaml', { FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'default' });
    await tmux.tmux('send-keys', '-t', 'agent', 'make the marker', 'Enter');
    await tmux.waitFor('agent', /\[y\]es once/);
    expect(agentRecord().status).toBe('waiting_approval');
    expect(existsSync(join(fleet.project, 'marker.txt'))).toBe(false);
    await tmux.tmux('send-keys', '-t', 'agent', 'y', 'Enter');
    await tmux.waitFor('agent', /Result: wrote-it/);
    expect(readFileSync(join(fleet.project, 'marker.txt'), 'utf8')).toBe('approved\n');
    const { readAudit } = await import('../../src/audit/read.js');
    expect(readAudit(fleet.layout, { event: 'approval' }).lines).toEqual([
      expect.objectContaining({ tool: 'shell', decision: 'approved', by: 'pane' }),
    ]);
    // Answered in the pane, the request has left the human inbox: a later CLI answer says so.
    const { list } = await import('../../src/inbox/read.js');
    const request = await eventually(
      async () =>
        (await list(fleet.layout, 'human', { includeRead: true })).find(
          (i) => i.message.kind === 'approval_request' && i.read,
        ),
      5_000,
      'the request to be claimed',
    );
    const late = await flotilla(['approve', (request.message as { request_id: string }).request_id], {
      cwd: fleet.project,
      env: { FLOTILLA_ROOT: fleet.layout.root },
    });
    expect(late.exitCode).toBe(1);
    expect(late.stderr).toMatch(/was already answered/);
  });

  it('Ctrl-C during a pending approval withdraws the question; the agent stays idle past the approval timeout', async () => {
    // 8 s: Ctrl-C must land before the question times out, on a loaded machine too.
    const timeoutSecs = 8;
    await startAgent('harness/asks.yaml', {
      FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'default',
      FLOTILLA_AGENTS_APPROVAL_TIMEOUT_SECS: String(timeoutSecs),
    });
    await tmux.tmux('send-keys', '-t', 'agent', 'make the marker', 'Enter');
    await tmux.waitFor('agent', /\[y\]es once/);
    // The question's timer started before it was drawn, so before this.
    const askedBy = Date.now();
    await tmux.tmux('send-keys', '-t', 'agent', 'C-c');
    await tmux.waitFor('agent', /withdrawn: the turn was stopped/);
    await eventually(() => agentRecord().status === 'idle', 5_000, 'idle');
    // Past the approval timeout: a question left waiting would have set the record back to working.
    await new Promise((r) => setTimeout(r, Math.max(0, askedBy + (timeoutSecs + 1) * 1000 - Date.now())));
    expect(agentRecord().status).toBe('idle');
    expect(existsSync(join(fleet.project, 'marker.txt'))).toBe(false);
    const { readAudit } = await import('../../src/audit/read.js');
    expect(readAudit(fleet.layout, { event: 'approval' }).lines).toEqual([
      expect.objectContaining({ decision: 'denied', by: 'aborted' }),
    ]);
  });
});
