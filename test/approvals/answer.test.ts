import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deliver } from '../../src/inbox/deliver.js';
import { list } from '../../src/inbox/read.js';
import { CLI } from '../helpers/cli.js';
import { fixture, scriptCalls } from '../helpers/scripts.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { bannerId, project, type Project } from '../hooks-e2e/project.js';

const ASKS = fixture('resume/asks.yaml');

/** The text of every tool result in a logged prompt. */
function toolResults(prompt: { role: string; content: unknown }[]): string[] {
  return prompt.filter((m) => m.role === 'tool').map((m) => JSON.stringify(m.content));
}

describe('flotilla approve / deny answer a default-mode agent in a real tmux pane', () => {
  let p: Project;
  let tmux: TmuxServer;
  let log: string;
  beforeEach(() => {
    p = project('flotilla-approve-');
    tmux = tmuxServer();
    log = join(p.project, 'calls.jsonl');
    p.agent('asker', { permissions: { permission_mode: 'default' } });
  });
  afterEach(async () => {
    await tmux.kill();
    p.cleanup();
  });

  /** Starts the agent one-shot in a pane (a TTY, so it may ask a person); resolves with its pending request. */
  async function askInPane(): Promise<{ requestId: string; agentId: string }> {
    const env = Object.entries(p.env({ FLOTILLA_TMUX_SOCKET: tmux.socket, FLOTILLA_SCRIPT_LOG: log })).map(
      ([k, v]) => `${k}=${v}`,
    );
    await tmux.tmux(
      'new-session',
      '-d',
      '-s',
      'asker',
      '-x',
      '200',
      '-y',
      '50',
      '-c',
      p.project,
      '--',
      'env',
      '-i',
      ...env,
      process.execPath,
      CLI,
      'run',
      '--agent',
      'asker',
      '--model',
      `script:${ASKS}`,
      '--oneshot',
      'write the file',
    );
    await tmux.tmux('set-option', '-t', 'asker', 'remain-on-exit', 'on');
    const item = await eventually(
      async () => (await list(p.layout, 'human')).find((i) => i.message.kind === 'approval_request'),
      20_000,
      'an approval request',
    );
    if (item.message.kind !== 'approval_request') throw new Error('unreachable');
    expect(item.message.tool).toBe('shell');
    expect(item.message.summary).toContain('asks to run $ echo approved-run > ran.txt');
    await eventually(() => p.record(item.message.from).status === 'waiting_approval', 10_000, 'waiting_approval');
    return { requestId: item.message.request_id, agentId: item.message.from };
  }

  async function ended(id: string): Promise<string> {
    return eventually(
      () =>
        ['completed', 'failed', 'cancelled', 'timed_out'].includes(p.record(id).status)
          ? p.record(id).status
          : undefined,
      20_000,
      `${id} to end`,
    );
  }

  it('deny --reason: the call does not run and the model reads the reason', async () => {
    const { requestId, agentId } = await askInPane();
    const r = await p.run(['deny', requestId.slice(0, 12), '--reason', 'too risky']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(`denied ${requestId} (${agentId}): too risky`);
    await ended(agentId);
    expect(existsSync(join(p.project, 'ran.txt'))).toBe(false);
    const next = scriptCalls(log).at(-1)!;
    expect(toolResults(next.prompt).join('\n')).toContain('a person denied it: too risky');
    expect(readFileSync(p.layout.output(agentId), 'utf8')).toContain('too risky');
    // The request left the unread list; answering twice is an error.
    expect((await list(p.layout, 'human')).some((i) => i.message.kind === 'approval_request')).toBe(false);
    const again = await p.run(['approve', requestId]);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain(`request ${requestId}`);
    expect(
      p
        .audit()
        .some((l) => l.event === 'approval' && l.request === requestId && l.decision === 'denied' && l.by === 'cli'),
    ).toBe(true);
  });

  it('approve: the command runs', async () => {
    const { requestId, agentId } = await askInPane();
    const r = await p.run(['approve', requestId]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`approved ${requestId}: ${agentId} may run`);
    expect(await ended(agentId)).toBe('completed');
    expect(readFileSync(join(p.project, 'ran.txt'), 'utf8')).toBe('approved-run\n');
    expect(readFileSync(p.layout.output(agentId), 'utf8')).toContain('After asking: wrote-it');
  });

  it('an unanswered request is denied after agents.approval_timeout_secs; answering later says it expired', async () => {
    // 5 s, not less: askInPane must see the agent waiting before the request times out, on a loaded machine too.
    p.config({ agents: { approval_timeout_secs: 5 } });
    const { requestId, agentId } = await askInPane();
    await ended(agentId);
    expect(existsSync(join(p.project, 'ran.txt'))).toBe(false);
    const next = scriptCalls(log).at(-1)!;
    expect(toolResults(next.prompt).join('\n')).toContain('nobody answered within 5s (agents.approval_timeout_secs)');
    const late = await p.run(['approve', requestId]);
    expect(late.exitCode).toBe(1);
    expect(late.stderr).toMatch(new RegExp(`request ${requestId} (is moot: agent '${agentId}' has ended|expired)`));
  });
});

describe('who may answer', () => {
  let p: Project;
  beforeEach(() => {
    p = project('flotilla-approve-who-');
  });
  afterEach(() => p.cleanup());

  it('an agent calling flotilla approve from its shell is refused: approvals must come from a person', async () => {
    p.agent('sneaky', { permissions: { permission_mode: 'dont_ask' } });
    const r = await p.run([
      'run',
      '--agent',
      'sneaky',
      '--model',
      `script:${fixture('resume/self-approve.yaml')}`,
      '--oneshot',
      'approve yourself',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const id = bannerId(r.stderr);
    expect(r.stdout).toContain(
      `approve refused: approvals must come from a person, and this command runs inside agent '${id}'`,
    );
    expect(r.stdout).toContain('[flotilla:not-a-person');
    expect(r.stdout).toContain('exit=1');
  });

  it('a secret request whose agent is gone is moot (nothing is handed over); unknown ids say how to list requests', async () => {
    await deliver(p.layout, {
      from: 'human',
      to: 'human',
      kind: 'secret_request',
      request_id: 'sec0000001abc',
      key: 'GITHUB_TOKEN',
      body: 'please',
    });
    const r = await p.run(['approve', 'sec0000001', '--ttl', '60'], { env: { GITHUB_TOKEN: 'not-used-0123456789' } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(
      "flotilla: request sec0000001abc is moot: agent 'human' has ended, and its grants ended with it",
    );
    const d = await p.run(['deny', 'sec0000001']);
    expect(d.stderr).toContain('is moot');
    const none = await p.run(['deny', 'nothing-here']);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toBe(
      "flotilla: no approval request matches 'nothing-here' — run 'flotilla inbox' to list pending requests",
    );
  });
});
