import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configSchema, defaultConfig } from '../../src/config/schema.js';
import { parseDefinition } from '../../src/definitions/parse.js';
import { holdAnswer } from '../../src/fleet/answer-proof.js';
import { createRecord } from '../../src/fleet/registry.js';
import { ancestorLacking, SecretBroker } from '../../src/harness/secret-broker.js';
import { list } from '../../src/inbox/read.js';
import { nullLog } from '../../src/audit/logger.js';
import { listenForAnswer, sendAnswer } from '../../src/secrets/handoff.js';
import { defaultEnvName, secretSource, secretSourceVars, secretVarName } from '../../src/secrets/keys.js';
import {
  holdForRedaction,
  redact,
  redactDeep,
  redactValue,
  secretForms,
  redactText,
} from '../../src/secrets/redact.js';
import { resolveSecretValue } from '../../src/secrets/resolve.js';
import type { SessionEvent } from '../../src/harness/session-types.js';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';
import { fixture } from '../helpers/scripts.js';
import { parseApprovalAnswer } from '../../src/harness/repl-input.js';
import { formatApprovalQuestion } from '../../src/harness/pane/format-event.js';
import { makeStyle } from '../../src/harness/pane/ansi.js';
import { eventually } from '../helpers/tmux.js';

const VALUE = 'ghp_unitTest0123456789/+ =&?';

describe('redaction', () => {
  it('replaces the value and its base64, URL-encoded and JSON-escaped forms with [secret:<key>]', () => {
    const held = [{ key: 'github-token', forms: secretForms(VALUE) }];
    const b64 = Buffer.from(VALUE).toString('base64');
    const text = [
      VALUE,
      b64,
      b64.replace(/=+$/, ''),
      Buffer.from(VALUE).toString('base64url'),
      encodeURIComponent(VALUE),
      encodeURIComponent(VALUE).replace(/%20/g, '+'),
      JSON.stringify(VALUE),
    ].join(' | ');
    const out = redactText(text, held);
    expect(out).toBe(Array(6).fill('[secret:github-token]').join(' | ') + ' | "[secret:github-token]"');
  });

  it('redacts strings inside objects and leaves keys and non-strings alone', () => {
    const held = [{ key: 'k', forms: secretForms(VALUE) }];
    expect(redactDeep({ a: [`x${VALUE}y`, 3], [VALUE]: null, n: { b: VALUE } }, held)).toEqual({
      a: ['x[secret:k]y', 3],
      [VALUE]: null,
      n: { b: '[secret:k]' },
    });
  });

  it('redacts process-wide only while a value is held', () => {
    expect(redact(`a ${VALUE}`)).toBe(`a ${VALUE}`);
    const release = holdForRedaction('github-token', VALUE);
    expect(redact(`a ${VALUE}`)).toBe('a [secret:github-token]');
    expect(redactValue({ line: VALUE })).toEqual({ line: '[secret:github-token]' });
    release();
    expect(redact(`a ${VALUE}`)).toBe(`a ${VALUE}`);
  });
});

describe('key names and sources', () => {
  it('the default variable is the upper-cased key with - and . as _', () => {
    expect(defaultEnvName('github-token')).toBe('GITHUB_TOKEN');
    expect(defaultEnvName('npm.publish-key')).toBe('NPM_PUBLISH_KEY');
  });

  it('config says per key where the value comes from and which variable commands see', () => {
    const config = configSchema.parse({
      security: {
        secrets: { 'github-token': { command: 'pass show github', var: 'GH_TOKEN' }, npm: { env: 'MY_NPM' } },
      },
    });
    expect(secretSource('github-token', config)).toEqual({ command: 'pass show github' });
    expect(secretVarName('github-token', config)).toBe('GH_TOKEN');
    expect(secretSource('npm', config)).toEqual({ env: 'MY_NPM' });
    expect(secretSource('other-key', config)).toEqual({ env: 'OTHER_KEY' });
    expect(secretSourceVars(['other-key'], config).sort()).toEqual(['GH_TOKEN', 'MY_NPM', 'NPM', 'OTHER_KEY']);
    expect(() => configSchema.parse({ security: { secrets: { k: { env: 'A', command: 'b' } } } })).toThrow(
      /env or command, not both/,
    );
  });

  it('definitions load seed-style keys and the old env-var lists; a bad key says how to write one', () => {
    const parse = (secrets: string) =>
      parseDefinition(`---\nname: a\ndescription: b\npermissions: {secrets: ${secrets}}\n---\nbody\n`, {
        path: '/x.md',
        scope: 'project',
        config: defaultConfig(),
      });
    expect(parse('[github-token, npm.publish]').definition?.secrets).toEqual(['github-token', 'npm.publish']);
    expect(parse('[GITHUB_TOKEN, _LEGACY]').definition?.secrets).toEqual(['GITHUB_TOKEN', '_LEGACY']);
    expect(parse('[-bad]').errors[0]?.message).toContain(
      "permissions.secrets must be a list of secret key names (1-64 letters, digits, '_', '.' or '-', starting with a letter or digit)",
    );
  });
});

describe('value resolution in the approving process', () => {
  const config = configSchema.parse({
    security: { secrets: { cmd: { command: 'printf "%s\\n" "from-a-command-123"' }, bad: { command: 'exit 3' } } },
  });

  it('reads the default variable, or a command’s stdout without its final newline', async () => {
    expect((await resolveSecretValue('github-token', config, { env: { GITHUB_TOKEN: VALUE } })).toString()).toBe(VALUE);
    expect((await resolveSecretValue('cmd', config, { env: process.env })).toString()).toBe('from-a-command-123');
  });

  it('says what to set when the value is missing, and refuses values too short to redact', async () => {
    await expect(resolveSecretValue('github-token', config, { env: {} })).rejects.toThrow(
      "secret 'github-token' has no value here: set GITHUB_TOKEN in the approving shell",
    );
    await expect(resolveSecretValue('github-token', config, { env: { GITHUB_TOKEN: 'abc' } })).rejects.toThrow(
      'shorter than 8 characters',
    );
    await expect(resolveSecretValue('bad', config, { env: process.env })).rejects.toThrow(
      'security.secrets.bad.command exited with status 3',
    );
  });
});

describe('the handoff socket', () => {
  let fleet: TempFleet;
  beforeEach(() => {
    fleet = tempFleet();
  });
  afterEach(() => fleet.cleanup());

  it('is 0600 in a 0700 folder, carries header and value, and is removed once an answer settles', async () => {
    const path = fleet.layout.secretSocket('req1');
    const got: string[] = [];
    const listener = await listenForAnswer(path, async (h, value) => {
      got.push(`${h.decision}:${h.ttl_secs}:${value.toString()}`);
      return { ok: true, message: 'granted', settled: true };
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(fleet.layout.secretsDir).mode & 0o777).toBe(0o700);
    const reply = await sendAnswer(path, { decision: 'approve', ttl_secs: 5 }, Buffer.from(VALUE));
    expect(reply).toEqual({ ok: true, message: 'granted' });
    expect(got).toEqual([`approve:5:${VALUE}`]);
    expect(existsSync(path)).toBe(false);
    await expect(sendAnswer(path, { decision: 'deny' })).rejects.toThrow(
      'the agent is no longer waiting for this request',
    );
    listener.close();
  });

  it('an answer that does not settle keeps the socket for another try', async () => {
    const path = fleet.layout.secretSocket('req2');
    let n = 0;
    const listener = await listenForAnswer(path, async () => ({
      ok: n++ > 0,
      message: n > 1 ? 'ok' : 'too short',
      settled: n > 1,
    }));
    expect(await sendAnswer(path, { decision: 'approve' }, Buffer.from('x'))).toEqual({
      ok: false,
      message: 'too short',
    });
    expect(existsSync(path)).toBe(true);
    expect((await sendAnswer(path, { decision: 'approve' }, Buffer.from(VALUE))).ok).toBe(true);
    expect(existsSync(path)).toBe(false);
    listener.close();
  });
});

describe('SecretBroker', () => {
  let fleet: TempFleet;
  const events: SessionEvent[] = [];
  beforeEach(() => {
    fleet = tempFleet();
    events.length = 0;
  });
  afterEach(() => fleet.cleanup());

  const broker = (over: Partial<ConstructorParameters<typeof SecretBroker>[0]> = {}) =>
    new SecretBroker({
      layout: fleet.layout,
      config: defaultConfig(),
      agentId: 'kid-aaaaaa',
      keys: ['github-token'],
      ttlSecs: 1,
      noApprover: null,
      sandboxed: true,
      ancestorLacking: () => undefined,
      env: {},
      emit: (e) => events.push(e),
      setWaiting: () => undefined,
      onGrants: () => undefined,
      log: nullLog,
      ...over,
    });
  const signal = () => new AbortController().signal;

  it('a child never gets a key an ancestor may not request, however its own record reads', async () => {
    createRecord(
      fleet.layout,
      recordInput('top-aaaaaa', { effectivePolicy: { tools: ['shell'], permissionMode: 'dont_ask', secrets: [] } }),
    );
    const kid = createRecord(
      fleet.layout,
      recordInput('kid-aaaaaa', {
        parentId: 'top-aaaaaa',
        rootId: 'top-aaaaaa',
        depth: 1,
        effectivePolicy: { tools: ['shell'], permissionMode: 'dont_ask', secrets: ['github-token'] },
      }),
    );
    expect(ancestorLacking(fleet.layout, kid, 'github-token')).toBe('top-aaaaaa');
    const b = broker({ ancestorLacking: (key) => ancestorLacking(fleet.layout, kid, key) });
    expect(await b.request('github-token', 'x', signal())).toEqual({
      granted: false,
      key: 'github-token',
      reason:
        "'top-aaaaaa', an ancestor of this agent, may not request 'github-token', so it cannot be granted here (no escalation, §7)",
    });
    expect((await list(fleet.layout, 'human')).length).toBe(0);
  });

  it('grants over the socket, lends the value to commands, and wipes it when the TTL passes and no command holds it', async () => {
    const b = broker();
    const asked = b.request('github-token', 'deploy', signal());
    const item = await eventually(async () => (await list(fleet.layout, 'human'))[0], 5000, 'the request');
    if (item.message.kind !== 'secret_request') throw new Error('not a secret request');
    const socket = fleet.layout.secretSocket(item.message.request_id);
    // Whoever merely connects is refused: the answering process must hold the answer file.
    const unproven = await sendAnswer(socket, { decision: 'approve', ttl_secs: 3 }, Buffer.from(VALUE));
    expect(unproven).toMatchObject({ ok: false, message: expect.stringMatching(/^answer refused: /) });
    const held = holdAnswer(fleet.layout.approvalAnswer(item.message.request_id), { decision: 'approve' }, 'cli');
    // 3 s: the lease below must be taken before the grant expires, on a loaded machine too.
    const reply = await sendAnswer(socket, { decision: 'approve', ttl_secs: 3 }, Buffer.from(VALUE));
    held.release();
    expect(reply.ok).toBe(true);
    expect(await asked).toMatchObject({ granted: true, key: 'github-token', varName: 'GITHUB_TOKEN' });
    const lease = b.lease();
    expect(lease.env).toEqual({ GITHUB_TOKEN: VALUE });
    const peek = () => {
      const l = b.lease();
      l.release();
      return l.env;
    };
    await eventually(() => peek().GITHUB_TOKEN === undefined, 5000, 'expiry');
    // Still held by the running command: its output is still redacted.
    expect(redact(VALUE)).toBe('[secret:github-token]');
    lease.release();
    expect(redact(VALUE)).toBe(VALUE);
  });

  it('close() while a request is still being filed denies it at once, not at the approval timeout', async () => {
    const b = broker({ ttlSecs: 60 });
    const asked = b.request('github-token', undefined, signal());
    b.close('cancelled');
    expect(await asked).toEqual({ granted: false, key: 'github-token', reason: 'the agent ended (cancelled)' });
  }, 20_000);

  it('close() denies a pending request and revokes live grants (the agent ended)', async () => {
    const b = broker({ ttlSecs: 60 });
    const asked = b.request('github-token', undefined, signal());
    await eventually(async () => (await list(fleet.layout, 'human'))[0], 5000, 'the request');
    b.close('cancelled');
    expect(await asked).toEqual({ granted: false, key: 'github-token', reason: 'the agent ended (cancelled)' });
    expect(await b.request('github-token', undefined, signal())).toMatchObject({
      granted: false,
      reason: 'the agent is ending',
    });
  });
});

describe('the pane question', () => {
  it('asks y / n for a secret (no "always") and shows key, agent, TTL and reason', () => {
    expect(parseApprovalAnswer('y', 'r1', 'secret')).toEqual({ requestId: 'r1', decision: 'approve', scope: 'once' });
    expect(parseApprovalAnswer('a', 'r1', 'secret')).toEqual({ error: 'answer y (give the secret) or n / n <reason>' });
    expect(parseApprovalAnswer('n later', 'r1', 'secret')).toEqual({
      requestId: 'r1',
      decision: 'deny',
      reason: 'later',
    });
    const q = formatApprovalQuestion(
      {
        id: 'r1',
        agentId: 'bot-aaaaaa',
        tool: 'request_secret',
        kind: 'secret',
        key: 'github-token',
        ttlSecs: 120,
        reason: 'push',
        summary: '',
        createdAt: '',
      },
      makeStyle(false),
      120,
    );
    expect(q).toBe("Give secret 'github-token' to bot-aaaaaa for 120 s? reason: push");
  });
});

describe('the full example definition', () => {
  let fleet: TempFleet;
  beforeEach(() => {
    fleet = tempFleet();
  });
  afterEach(() => fleet.cleanup());

  it('loads with every documented field and agents show displays it', async () => {
    mkdirSync(fleet.layout.agentsDir, { recursive: true });
    writeFileSync(
      join(fleet.layout.agentsDir, 'release-bot.md'),
      readFileSync(fixture('secrets/agents/release-bot.md')),
    );
    // Its hooks and mode count once the person trusts the folder (docs/security-trust.md "Folder trust").
    const env = {
      FLOTILLA_ROOT: fleet.layout.root,
      HOME: join(fleet.project, 'home'),
      XDG_CONFIG_HOME: join(fleet.project, 'home', '.config'),
    };
    expect((await flotilla(['trust'], { cwd: fleet.project, env })).exitCode).toBe(0);
    const r = await flotilla(['agents', 'show', 'release-bot'], { cwd: fleet.project, env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(r.stderr).toBe('');
    const out = String(r.stdout);
    for (const line of [
      'name:             release-bot',
      'model:            sonnet (→ anthropic:claude-sonnet-4-5)',
      'tools:            shell, read, glob, grep, spawn_agent, request_secret',
      'tools as written: allow [Read, Grep, Glob, Bash, Task]; except [Write]',
      'permission mode:  accept_edits',
      'secrets:          github-token (as $GITHUB_TOKEN, value from $GITHUB_TOKEN)',
      'max turns:        12',
      'timeout:          900 s',
      'secret ttl:       120 s',
      'background:       false',
      'memory:           project',
      'skills:           include [release-*]; exclude [release-draft]',
      'hooks:            PreToolUse[Bash]: true',
      'color:            magenta',
    ])
      expect(out).toContain(line);
    expect(out).toContain('call request_secret with key github-token');
    const json = JSON.parse(
      String((await flotilla(['agents', 'show', 'release-bot', '--json'], { cwd: fleet.project, env })).stdout),
    );
    expect(json).toMatchObject({ secrets: ['github-token'], ttlSecs: 120, timeoutSecs: 900, warnings: [] });
  });
});
