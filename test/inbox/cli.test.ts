import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { maildir, unreadCount } from '../../src/inbox/maildir.js';
import { list } from '../../src/inbox/read.js';
import { processStartTime, selfPid } from '../../src/fleet/proc.js';
import { updateRecord } from '../../src/fleet/registry.js';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { addAgent } from './helpers.js';

describe('flotilla send / flotilla inbox (built CLI)', () => {
  let f: TempFleet;
  beforeEach(() => {
    f = tempFleet();
  });
  afterEach(() => f.cleanup());

  // A plain shell: no agent identity, no user config.
  const cli = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
    flotilla(['--root', f.layout.root, ...args], {
      cwd: f.project,
      ...(opts.input !== undefined ? { input: opts.input } : { stdin: 'ignore' as const }),
      env: { FLOTILLA_AGENT_ID: '', XDG_CONFIG_HOME: join(f.project, 'xdg'), FLOTILLA_ROOT: '', ...opts.env },
    });

  it("send human 'hi' from a plain shell: prints the id, from=human", async () => {
    const r = await cli(['send', 'human', 'hi', 'there']);
    expect(r.exitCode).toBe(0);
    const id = String(r.stdout).trim();
    const items = await list(f.layout, 'human');
    expect(items.map((i) => [i.message.id, i.message.from, i.message.to, i.message.body, i.message.summary])).toEqual([
      [id, 'human', 'human', 'hi there', 'hi there'],
    ]);
  });

  it('send to an unknown recipient: exit 1, one line on stderr, nothing written', async () => {
    const r = await cli(['send', 'ghost', 'hello']);
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr).trimEnd().split('\n')).toHaveLength(1);
    expect(String(r.stderr)).toMatch(/^flotilla: unknown recipient 'ghost'/);
    expect(existsSync(join(f.layout.inboxRoot, 'ghost'))).toBe(false);
    expect(readdirSync(f.layout.inboxRoot)).toEqual([]);
  });

  it('reads stdin, honours --summary/--priority/--reply-to/--kind and prints the header with --json', async () => {
    addAgent(f.layout, 'lead-3kd9p1');
    const r = await cli(
      [
        'send',
        'lead',
        '--summary',
        'status',
        '--priority',
        'urgent',
        '--reply-to',
        '0mwrhkm7suessw7cr9j',
        '--kind',
        'system',
        '--json',
      ],
      { input: 'line one\nline two\n' },
    );
    expect(r.stderr).toBe('');
    const header = JSON.parse(String(r.stdout)) as Record<string, unknown>;
    expect(header).toMatchObject({
      from: 'human',
      to: 'lead-3kd9p1',
      kind: 'system',
      summary: 'status',
      priority: 'urgent',
      in_reply_to: '0mwrhkm7suessw7cr9j',
    });
    expect(header).not.toHaveProperty('body');
    expect((await list(f.layout, 'lead-3kd9p1'))[0]!.message.body).toBe('line one\nline two\n');
  });

  it("takes 'from' from process ancestry, not the environment: a forged FLOTILLA_AGENT_ID is refused", async () => {
    addAgent(f.layout, 'lead-3kd9p1');
    addAgent(f.layout, 'worker-7k2m9q', { parentId: 'lead-3kd9p1', rootId: 'lead-3kd9p1', depth: 1 });
    // This test process plays the worker's harness: the CLI it starts is in its ancestry.
    updateRecord(f.layout, 'worker-7k2m9q', { pid: selfPid(), pidStartTime: processStartTime(selfPid()) });
    const r = await cli(['send', 'parent', 'done'], { env: { FLOTILLA_AGENT_ID: '' } });
    expect(r.exitCode).toBe(0);
    const forged = await cli(['send', 'lead', 'I am the lead'], { env: { FLOTILLA_AGENT_ID: 'lead-3kd9p1' } });
    expect(forged.exitCode).toBe(1);
    expect(String(forged.stderr)).toMatch(
      /FLOTILLA_AGENT_ID names 'lead-3kd9p1', but this process belongs to agent 'worker-7k2m9q'/,
    );
    expect((await list(f.layout, 'lead-3kd9p1')).map((i) => [i.message.from, i.message.body])).toEqual([
      ['worker-7k2m9q', 'done'],
    ]);
  });

  it('refuses what people may not send: other kinds, an empty body, a body over the limit', async () => {
    const kind = await cli(['send', 'human', '--kind', 'completion', 'x']);
    expect(kind.exitCode).toBe(2);
    const empty = await cli(['send', 'human'], { input: '  \n' });
    expect(empty.exitCode).toBe(2);
    expect(String(empty.stderr)).toMatch(/empty message/);
    const big = await cli(['send', 'human'], { input: 'x'.repeat(1_048_577) });
    expect(big.exitCode).toBe(1);
    expect(String(big.stderr).trim()).toMatch(
      /^flotilla: message body is .* — put large content in a file and send its path$/,
    );
    expect(unreadCount(f.layout, 'human')).toBe(0);
  });

  it('inbox --json parses; --peek leaves the message unread; --read claims it', async () => {
    const low = String((await cli(['send', 'human', '--priority', 'low', 'low one'])).stdout).trim();
    const urgent = String((await cli(['send', 'human', '--priority', 'urgent', 'urgent one'])).stdout).trim();

    const listed = JSON.parse(String((await cli(['inbox', '--json'])).stdout)) as {
      id: string;
      read: boolean;
      from: string;
    }[];
    expect(listed.map((m) => [m.id, m.read, m.from])).toEqual([
      [urgent, false, 'human'],
      [low, false, 'human'],
    ]);

    const table = String((await cli(['inbox'])).stdout);
    expect(table).toMatch(/^ID\s+FROM\s+KIND\s+PRIORITY\s+AGE\s+STATE\s+SUMMARY/);
    expect(table.indexOf('urgent one')).toBeLessThan(table.indexOf('low one'));

    const peeked = await cli(['inbox', '--read', low.slice(0, 16), '--peek']);
    expect(peeked.exitCode).toBe(0);
    expect(String(peeked.stdout)).toContain('low one');
    expect(unreadCount(f.layout, 'human')).toBe(2);
    const peekAll = await cli(['inbox', '--peek']);
    expect(String(peekAll.stdout)).toContain('urgent one');
    expect(unreadCount(f.layout, 'human')).toBe(2);

    const read = JSON.parse(String((await cli(['inbox', '--read', low, '--json'])).stdout)) as {
      id: string;
      body: string;
      claimed: boolean;
    };
    expect(read).toMatchObject({ id: low, body: 'low one', claimed: true });
    expect(unreadCount(f.layout, 'human')).toBe(1);
    expect(readdirSync(maildir(f.layout, 'human').cur)).toHaveLength(1);

    const all = JSON.parse(String((await cli(['inbox', '--all', '--json'])).stdout)) as { id: string; read: boolean }[];
    expect(all.map((m) => [m.id, m.read])).toEqual([
      [urgent, false],
      [low, true],
    ]);
  });

  it("lists an agent's inbox by prefix, but will not claim from someone else's", async () => {
    addAgent(f.layout, 'lead-3kd9p1');
    const id = String((await cli(['send', 'lead-3', 'for the lead'])).stdout).trim();
    const listed = JSON.parse(String((await cli(['inbox', 'lead', '--json'])).stdout)) as { id: string }[];
    expect(listed.map((m) => m.id)).toEqual([id]);
    const steal = await cli(['inbox', 'lead', '--read', id]);
    expect(steal.exitCode).toBe(2);
    expect(String(steal.stderr)).toMatch(/--peek/);
    expect(unreadCount(f.layout, 'lead-3kd9p1')).toBe(1);
  });
});

describe('inbox settings', () => {
  it('the built-in defaults equal the config schema defaults', async () => {
    const { DEFAULT_INBOX_SETTINGS } = await import('../../src/inbox/settings.js');
    const { defaultConfig } = await import('../../src/config/schema.js');
    expect(DEFAULT_INBOX_SETTINGS).toEqual(defaultConfig().inbox);
  });

  it('a project config lowering inbox.max_body_bytes is honoured by send', async () => {
    const f = tempFleet();
    try {
      writeFileSync(f.layout.configFile, 'inbox:\n  max_body_bytes: 10\n');
      const r = await flotilla(['--root', f.layout.root, 'send', 'human', 'more than ten bytes'], {
        cwd: f.project,
        env: { FLOTILLA_AGENT_ID: '', XDG_CONFIG_HOME: join(f.project, 'xdg') },
      });
      expect(r.exitCode).toBe(1);
      expect(String(r.stderr)).toMatch(/over the 10 bytes limit/);
    } finally {
      f.cleanup();
    }
  });
});
