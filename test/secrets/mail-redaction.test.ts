import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { list } from '../../src/inbox/read.js';
import { CLI } from '../helpers/cli.js';
import { fixture } from '../helpers/scripts.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { project, type Project } from '../hooks-e2e/project.js';

const MAILS = fixture('secrets/mails.yaml');
const VALUE = `ghp_mail${process.pid}x${Date.now()}Qz7`;

/** Every regular file under `dir` holding `needle`. */
function filesContaining(dir: string, needle: string): string[] {
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
      else if (st.isFile() && readFileSync(path, 'latin1').includes(needle)) hits.push(path);
    }
  };
  walk(dir);
  return hits;
}

/**
 * Mail a granted command sends goes through the agent's harness (its door) in every sandbox
 * mode (docs/security.md "The door"): the value is redacted from body and summary in the
 * parent's inbox on disk, and `from` is the agent. Without a sandbox, a command that wiped
 * its environment (no FLOTILLA_DOOR, no FLOTILLA_ROOT) still sends through its own harness;
 * inside the sandbox such a command cannot send at all.
 */
describe.each([
  { mode: 'none', sandbox: 'none' },
  { mode: 'bubblewrap', sandbox: 'bubblewrap' },
])('flotilla send of a granted secret under sandbox: $mode', ({ sandbox }) => {
  let p: Project;
  let tmux: TmuxServer;
  beforeEach(() => {
    p = project('flotilla-mail-redact-');
    tmux = tmuxServer();
    p.config({ security: { sandbox } });
    p.agent('mailer', {
      tools: 'Bash',
      permissions: { permission_mode: 'dont_ask', secrets: ['github-token'], ttl_secs: 300 },
    });
  });
  afterEach(async () => {
    await tmux.kill();
    p.cleanup();
  });

  it("arrives redacted in the parent's inbox on disk, body and summary, from the agent", async () => {
    const env = Object.entries(p.env({ FLOTILLA_TMUX_SOCKET: tmux.socket, NO_COLOR: '1' })).map(
      ([k, v]) => `${k}=${v}`,
    );
    await tmux.tmux(
      'new-session',
      '-d',
      '-s',
      'mail',
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
      'mailer',
      '--model',
      `script:${MAILS}`,
    );
    await tmux.waitFor('mail', /›/, 30_000);
    await tmux.tmux('send-keys', '-t', 'mail', 'mail the token', 'Enter');
    const item = await eventually(
      async () => (await list(p.layout, 'human')).find((i) => i.message.kind === 'secret_request'),
      30_000,
      'a secret request',
    );
    if (item.message.kind !== 'secret_request') throw new Error('unreachable');
    const agentId = item.message.from;
    const approved = await p.run(['approve', item.message.request_id, '--ttl', '300'], {
      env: { GITHUB_TOKEN: VALUE },
    });
    expect(approved.exitCode, approved.stderr).toBe(0);
    await tmux.waitFor('mail', /Sent:/, 60_000);

    const codes = Object.fromEntries(
      readFileSync(join(p.project, 'sends.txt'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(':') as [string, string]),
    );
    const mail = (await list(p.layout, 'human', { includeRead: true }))
      .map((i) => i.message)
      .filter((m) => m.kind === 'message');
    const plain = mail.find((m) => m.body.startsWith('token='));
    expect(plain, JSON.stringify(mail)).toMatchObject({
      from: agentId,
      to: 'human',
      summary: 'sum [secret:github-token]',
    });
    expect(plain!.body.trim()).toBe('token=[secret:github-token]');
    expect(codes.plain).toBe('0');
    if (sandbox === 'none') {
      // env -i took FLOTILLA_DOOR and FLOTILLA_ROOT away: the harness is still among its ancestors, and delivers.
      expect(codes.wiped).toBe('0');
      expect(mail.find((m) => m.body.startsWith('wiped='))).toMatchObject({
        from: agentId,
        body: expect.stringContaining('wiped=[secret:github-token]'),
      });
    } else {
      // Without its door nothing inside the sandbox can write an inbox.
      expect(codes.wiped).not.toBe('0');
      expect(mail.some((m) => m.body.startsWith('wiped='))).toBe(false);
    }
    // The value is in no file of the fleet: not the inbox, not the transcript, not the audit.
    expect(filesContaining(p.layout.root, VALUE)).toEqual([]);
  });
});
