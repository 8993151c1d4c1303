import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/fleet/proc.js';
import { list } from '../../src/inbox/read.js';
import { findHolders } from '../../src/secrets/holders.js';
import { CLI } from '../helpers/cli.js';
import { fixture, scriptCalls } from '../helpers/scripts.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { bannerId, project, type Project } from '../hooks-e2e/project.js';

const ASKS = fixture('secrets/asks.yaml');
const HOLDS = fixture('secrets/holds.yaml');
// A value that appears nowhere else, and its base64 (the script prints both).
const VALUE = `ghp_e2e${process.pid}x${Date.now()}Zq9`;
const VALUE_B64 = Buffer.from(VALUE).toString('base64');

/** Every regular file under `dir` that contains one of `needles`. */
function filesContaining(dir: string, needles: string[]): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      let st;
      try {
        st = statSync(path);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(path);
      else if (st.isFile()) {
        const text = readFileSync(path, 'latin1');
        if (needles.some((n) => text.includes(n))) hits.push(path);
      }
    }
  };
  walk(dir);
  return hits;
}

/** The text of every tool result the scripted model was given. */
function toolResults(log: string): string[] {
  return scriptCalls(log).flatMap((c) =>
    c.prompt.filter((m) => m.role === 'tool').map((m) => JSON.stringify(m.content)),
  );
}

describe('secrets on request (§11), end to end in a real tmux pane', () => {
  let p: Project;
  let tmux: TmuxServer;
  let log: string;
  beforeEach(() => {
    p = project('flotilla-secrets-');
    tmux = tmuxServer();
    log = join(p.project, 'calls.jsonl');
    p.agent('vault-user', {
      tools: 'Bash',
      permissions: { permission_mode: 'dont_ask', secrets: ['github-token'], ttl_secs: 300 },
    });
  });
  afterEach(async () => {
    await tmux.kill();
    p.cleanup();
  });

  /** Starts vault-user in a pane (a TTY: a person can answer), `env` added to the pane's own, and types its task. */
  async function startInPane(script: string, env: Record<string, string> = {}): Promise<void> {
    const vars = Object.entries(
      p.env({ FLOTILLA_TMUX_SOCKET: tmux.socket, FLOTILLA_SCRIPT_LOG: log, NO_COLOR: '1', ...env }),
    ).map(([k, v]) => `${k}=${v}`);
    await tmux.tmux(
      'new-session',
      '-d',
      '-s',
      'vault',
      '-x',
      '200',
      '-y',
      '50',
      '-c',
      p.project,
      '--',
      'env',
      '-i',
      ...vars,
      process.execPath,
      CLI,
      'run',
      '--agent',
      'vault-user',
      '--model',
      `script:${script}`,
    );
    await tmux.waitFor('vault', /›/, 20_000);
    await tmux.tmux('send-keys', '-t', 'vault', 'release it', 'Enter');
  }

  /** Starts vault-user in a pane and types its task; resolves with the pending request. */
  async function requestInPane(script = ASKS): Promise<{ requestId: string; agentId: string }> {
    await startInPane(script);
    const item = await eventually(
      async () => (await list(p.layout, 'human')).find((i) => i.message.kind === 'secret_request'),
      20_000,
      'a secret request',
    );
    if (item.message.kind !== 'secret_request') throw new Error('unreachable');
    expect(item.message).toMatchObject({ key: 'github-token', ttl_secs: 300 });
    expect(item.message.body).toContain('push the release tag');
    return { requestId: item.message.request_id, agentId: item.message.from };
  }

  it('approve --ttl 10: a command gets the value, the model sees [secret:github-token], and once it expires the next command does not; the value is nowhere on disk or in tmux', async () => {
    const { requestId, agentId } = await requestInPane();
    await tmux.waitFor('vault', /Give secret 'github-token' to .* for 300 s\? reason: push the release tag/);
    expect(p.record(agentId).status).toBe('waiting_approval');

    // 10 s: the agent's next turn must run its command before the grant expires, on a loaded machine too.
    const approved = await p.run(['approve', requestId.slice(0, 10), '--ttl', '10'], { env: { GITHUB_TOKEN: VALUE } });
    expect(approved.exitCode, approved.stderr).toBe(0);
    expect(approved.stdout).toContain(`approved ${requestId}: ${agentId} holds secret 'github-token' until`);

    // The command printed the value and its base64; the model and the pane got the marker for both.
    const screen = await tmux.waitFor('vault', /Saw: token=\[secret:github-token\] \[secret:github-token\]/, 20_000);
    expect(screen).not.toContain(VALUE);
    const seen = toolResults(log);
    expect(seen.some((t) => t.includes('token=[secret:github-token]'))).toBe(true);
    expect(seen.join('\n')).not.toContain(VALUE);

    // After the TTL the grant is gone: the same kind of command sees no variable.
    await eventually(() => p.audit().some((l) => l.event === 'secret_expired'), 15_000, 'the grant to expire');
    expect(p.record(agentId).secretGrants).toEqual([]);
    await tmux.tmux('send-keys', '-t', 'vault', 'check again', 'Enter');
    await tmux.waitFor('vault', /Later: token=unset/, 20_000);

    const audit = p.audit().filter((l) => String(l.event).startsWith('secret_'));
    expect(audit.map((l) => l.event)).toEqual(['secret_requested', 'secret_granted', 'secret_expired']);
    expect(audit[1]).toMatchObject({
      agent: agentId,
      key: 'github-token',
      request: requestId,
      by: 'cli',
      ttl_secs: 10,
      var: 'GITHUB_TOKEN',
    });

    // The grep the issue asks for: every file under the fleet root (logs, transcripts, audit,
    // registry, inbox, output), the model's log, the tmux environment and the pane's history.
    const needles = [VALUE, VALUE_B64];
    expect(filesContaining(p.layout.root, needles)).toEqual([]);
    expect(filesContaining(p.project, needles)).toEqual([]);
    const tmuxEnv = (await tmux.tmux('show-environment', '-g')) + (await tmux.tmux('show-environment', '-t', 'vault'));
    expect(tmuxEnv).not.toContain(VALUE);
    const history = await tmux.tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'vault');
    expect(history).not.toContain(VALUE);
    expect(history).toContain("secret 'github-token' expired");
    // The handoff socket was removed as soon as it was used; what stays is the fleet's digest
    // set for redaction (salted HMACs, never the value: docs/security-trust.md "Secrets").
    expect(readdirSync(p.layout.secretsDir).sort()).toEqual(['redact.jsonl', 'redact.salt']);
    expect(readFileSync(join(p.layout.secretsDir, 'redact.jsonl'), 'utf8')).not.toContain(VALUE);
  });

  it("at the grant's end the agent's own server holding the value is ended; a person's tmux server started with the same VAR=value is left running and reported", async () => {
    // The person's own tmux server, started from a shell that exports the same token.
    const person = tmuxServer();
    try {
      const started = await execa(
        'tmux',
        ['-L', person.socket, 'new-session', '-d', '-s', 'own', '--', 'sleep', '3600'],
        { env: { GITHUB_TOKEN: VALUE }, reject: false },
      );
      expect(started.exitCode, started.stderr).toBe(0);
      const serverPid = Number(await person.tmux('display-message', '-p', '#{pid}'));
      expect(findHolders('GITHUB_TOKEN', Buffer.from(VALUE)).map((h) => h.pid)).toContain(serverPid);

      const { requestId, agentId } = await requestInPane(HOLDS);
      const approved = await p.run(['approve', requestId, '--ttl', '10'], { env: { GITHUB_TOKEN: VALUE } });
      expect(approved.exitCode, approved.stderr).toBe(0);
      await tmux.waitFor('vault', /Started: server up: token=\[secret:github-token\]/, 20_000);
      const server = findHolders('GITHUB_TOKEN', Buffer.from(VALUE)).find((h) => h.command === 'sleep 3591');
      expect(server, "the agent's background server holds the value").toBeDefined();

      await eventually(() => p.audit().some((l) => l.event === 'secret_expired'), 20_000, 'the grant to expire');
      const harnessPid = p.record(agentId).pid;
      const ended = p.audit().filter((l) => l.event === 'secret_holder_ended');
      const left = p.audit().filter((l) => l.event === 'secret_holder_left');
      expect(ended).toContainEqual(
        expect.objectContaining({
          agent: agentId,
          key: 'github-token',
          request: requestId,
          holder_pid: server!.pid,
          command: 'sleep 3591',
          pid: harnessPid,
        }),
      );
      expect(left).toContainEqual(
        expect.objectContaining({
          agent: agentId,
          key: 'github-token',
          request: requestId,
          holder_pid: serverPid,
          pid: harnessPid,
        }),
      );
      expect(String(left.find((l) => l.holder_pid === serverPid)!.command)).toMatch(/^tmux -L /);
      // Nothing the person started is among the ended, and everything the agent started is.
      expect(ended.map((l) => l.holder_pid)).not.toContain(serverPid);
      expect(left.map((l) => l.command)).not.toContain('sleep 3591');

      await eventually(() => !isProcessAlive(server!.pid), 20_000, "the agent's server to end");
      expect(isProcessAlive(serverPid)).toBe(true);
      expect(await person.tmux('display-message', '-p', '-t', 'own', '#{session_name}')).toBe('own');
      await tmux.waitFor(
        'vault',
        new RegExp(`secret 'github-token': ended process ${server!.pid} \\(sleep 3591\\)`),
        20_000,
      );
      await tmux.waitFor(
        'vault',
        new RegExp(
          `secret 'github-token': process ${serverPid} \\(tmux -L [^)]*\\) still holds it in its environment; not started by this agent, so left running`,
        ),
        20_000,
      );
    } finally {
      await person.kill();
    }
  });

  it('status shows a live grant with its time left; flotilla deny revokes it at once', async () => {
    const { requestId, agentId } = await requestInPane();
    const approved = await p.run(['approve', requestId, '--ttl', '600'], { env: { GITHUB_TOKEN: VALUE } });
    expect(approved.exitCode, approved.stderr).toBe(0);
    await tmux.waitFor('vault', /Saw: token=\[secret:github-token\]/, 20_000);
    const status = await p.run(['status']);
    expect(status.stdout).toMatch(/\[secrets: github-token (9m\d+s|10m0s) left\]/);

    const denied = await p.run(['deny', requestId]);
    expect(denied.exitCode, denied.stderr).toBe(0);
    expect(denied.stdout).toBe(`revoked ${requestId}: ${agentId} no longer holds secret 'github-token'`);
    expect(p.record(agentId).secretGrants).toEqual([]);
    expect(p.audit().filter((l) => l.event === 'secret_revoked')).toEqual([
      expect.objectContaining({ key: 'github-token', reason: 'revoked by a person (flotilla deny)' }),
    ]);
    await tmux.tmux('send-keys', '-t', 'vault', 'check again', 'Enter');
    await tmux.waitFor('vault', /Later: token=unset/, 20_000);
    expect(filesContaining(p.layout.root, [VALUE, VALUE_B64])).toEqual([]);
  });

  it("the dashboard shows the request with key, agent, reason and TTL; a grants it, reading the value in the dashboard's process; the grant shows with its time left", async () => {
    const { agentId } = await requestInPane();
    const env = Object.entries(p.env({ FLOTILLA_TMUX_SOCKET: tmux.socket, GITHUB_TOKEN: VALUE })).map(
      ([k, v]) => `${k}=${v}`,
    );
    await tmux.tmux(
      'new-window',
      '-d',
      '-t',
      'vault:',
      '-n',
      'dash',
      '-c',
      p.project,
      '--',
      'env',
      '-i',
      ...env,
      process.execPath,
      CLI,
      'watch',
    );
    await tmux.waitFor(
      'vault:dash',
      new RegExp(`${agentId}: wants secret 'github-token' for 300 s: push the release tag`),
      20_000,
    );
    await tmux.tmux('send-keys', '-t', 'vault:dash', 'a');
    expect(await tmux.waitFor('vault:dash', /(granted|cannot answer) .*/, 20_000)).toMatch(
      new RegExp(`granted 'github-token' to ${agentId} until`),
    );
    await tmux.waitFor('vault', /Saw: token=\[secret:github-token\]/, 20_000);
    await tmux.waitFor('vault:dash', /secrets: github-token 4m\d+s left/, 20_000);
    expect(p.audit().find((l) => l.event === 'secret_granted')).toMatchObject({
      key: 'github-token',
      by: 'dashboard',
      ttl_secs: 300,
    });
    expect(filesContaining(p.layout.root, [VALUE, VALUE_B64])).toEqual([]);
  });

  it('n typed in the pane denies the request; the model reads the reason', async () => {
    await requestInPane();
    await tmux.waitFor('vault', /\[y\]es, give it/);
    await tmux.tmux('send-keys', '-t', 'vault', 'n not today', 'Enter');
    await eventually(() => p.audit().some((l) => l.event === 'secret_denied'), 15_000, 'the denial');
    expect(p.audit().find((l) => l.event === 'secret_denied')).toMatchObject({
      key: 'github-token',
      by: 'pane',
      reason: 'not today',
    });
    await eventually(
      () =>
        toolResults(log).some((t) =>
          t.includes("Secret 'github-token' was not granted: a person denied it: not today"),
        ),
      15_000,
      'the model to read the denial',
    );
  });

  it('y typed in the pane reads the value in that pane and grants it', async () => {
    // The pane's own environment is where a pane answer reads the value; the variable in the
    // harness's own environment is not passed to its commands.
    await startInPane(ASKS, { GITHUB_TOKEN: VALUE });
    await tmux.waitFor('vault', /\[y\]es, give it/, 20_000);
    await tmux.tmux('send-keys', '-t', 'vault', 'y', 'Enter');
    await tmux.waitFor('vault', /Saw: token=\[secret:github-token\]/, 20_000);
    expect(p.audit().find((l) => l.event === 'secret_granted')).toMatchObject({
      key: 'github-token',
      by: 'pane',
      ttl_secs: 300,
    });
    expect(filesContaining(p.layout.root, [VALUE, VALUE_B64])).toEqual([]);
  });
});

describe('secret requests nobody may grant are refused at once', () => {
  let p: Project;
  beforeEach(() => {
    p = project('flotilla-secrets-');
  });
  afterEach(() => p.cleanup());

  const ask = (key: string) =>
    p.script('ask.yaml', {
      replies: [
        { text: 'asking', tool_calls: [{ tool: 'request_secret', input: { key, reason: 'deploy' } }] },
        { when: { kind: 'tool_error' }, text: 'Refused: {{last_tool_result | one_line}}' },
        { text: 'Granted?! {{last_tool_result | one_line}}' },
      ],
    });

  it('a background agent is denied at once with the reason', async () => {
    p.agent('vault-user', { tools: 'Bash', permissions: { permission_mode: 'dont_ask', secrets: ['github-token'] } });
    const r = await p.run([
      'spawn',
      '--background',
      '--wait',
      '--agent',
      'vault-user',
      '--model',
      `script:${ask('github-token')}`,
      'deploy',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "Refused: Secret 'github-token' was not granted: this is a background agent: nobody can approve a secret request here, so it is denied at once",
    );
    expect(p.audit().filter((l) => String(l.event).startsWith('secret_'))).toEqual([
      expect.objectContaining({ event: 'secret_denied', key: 'github-token', rule: 'no-approver' }),
    ]);
    expect(
      (await list(p.layout, 'human', { includeRead: true })).filter((i) => i.message.kind === 'secret_request'),
    ).toEqual([]);
  });

  it('a key the definition does not list is refused, naming the keys it may request', async () => {
    p.agent('vault-user', { tools: 'Bash', permissions: { permission_mode: 'dont_ask', secrets: ['github-token'] } });
    const r = await p.run(['run', '--agent', 'vault-user', '--model', `script:${ask('aws-key')}`, 'deploy']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "Refused: Secret 'aws-key' was not granted: 'aws-key' is not among the keys this agent's definition may request (permissions.secrets: github-token)",
    );
    expect(p.audit().find((l) => l.event === 'secret_denied')).toMatchObject({
      agent: bannerId(r.stderr),
      key: 'aws-key',
      rule: 'not-in-definition',
    });
  });

  it('an agent whose definition lists no keys is not offered request_secret at all', async () => {
    p.agent('plain', { permissions: { permission_mode: 'dont_ask' } });
    const log = join(p.project, 'calls.jsonl');
    const r = await p.run(['run', '--agent', 'plain', '--model', `script:${ask('github-token')}`, 'deploy'], {
      env: { FLOTILLA_SCRIPT_LOG: log },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(scriptCalls(log)[0]!.tools).not.toContain('request_secret');
    expect(r.stdout).toContain('Refused:');
  });

  it('a child cannot be given a key its parent may not request: the spawn is refused naming the field', async () => {
    p.agent('lead', { permissions: { permission_mode: 'dont_ask' } });
    p.agent('vault-user', { tools: 'Bash', permissions: { permission_mode: 'dont_ask', secrets: ['github-token'] } });
    const script = p.script('lead.yaml', {
      replies: [
        {
          text: 'delegating',
          tool_calls: [{ tool: 'spawn_agent', input: { agent: 'vault-user', prompt: 'deploy', wait: true } }],
        },
        { text: 'Result: {{last_tool_result | one_line}}' },
      ],
    });
    const r = await p.run(['run', '--agent', 'lead', '--model', `script:${script}`, 'deploy']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("'vault-user' asks for secret 'github-token', which parent");
    expect(r.stdout).toContain('may not request (secrets)');
  });
});
