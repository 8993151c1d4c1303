import { execa } from 'execa';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { maildir } from '../../src/inbox/maildir.js';
import { list } from '../../src/inbox/read.js';
import type { InboxItem } from '../../src/inbox/read.js';
import { watchInbox } from '../../src/inbox/watch.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';
import { addAgent } from './helpers.js';

const README = fileURLToPath(new URL('../../inbox/README.md', import.meta.url));

/** The exact script printed in inbox/README.md, between its markers. */
function scriptFromReadme(): string {
  const text = readFileSync(README, 'utf8');
  const m = /<!-- deliver\.sh:begin -->\n```sh\n([\s\S]*?)```\n<!-- deliver\.sh:end -->/.exec(text);
  if (!m) throw new Error('inbox/README.md has no deliver.sh block between its markers');
  return m[1]!;
}

describe('the shell delivery script in inbox/README.md', () => {
  let f: TempFleet;
  let script: string;
  beforeEach(() => {
    f = tempFleet();
    script = join(f.project, 'deliver.sh');
    writeFileSync(script, scriptFromReadme());
  });
  afterEach(() => f.cleanup());

  const run = (args: string[], input: string, env: Record<string, string> = {}) =>
    execa('sh', [script, ...args], {
      input,
      reject: false,
      cwd: f.project,
      env: { FLOTILLA_ROOT: f.layout.root, FLOTILLA_AGENT_ID: '', ...env },
    });

  it('is about 20 lines', () => {
    expect(scriptFromReadme().trimEnd().split('\n').length).toBeLessThanOrEqual(22);
  });

  it('delivers a valid message that a watching reader receives', async () => {
    const w = watchInbox(f.layout, 'human');
    const got: InboxItem[] = [];
    w.on('message', (i) => got.push(i));
    await w.ready;
    try {
      const body = 'Build is green.\nDetails: "quotes", back\\slash, 100% & <inbox-message>\n';
      const r = await run(['human', 'Build "is" green \\ 100%'], body);
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      const id = r.stdout.trim();
      expect(id).toMatch(/^[0-9a-z]{19}$/);
      await eventually(() => got.length === 1, 5000, 'the scripted message');
      const m = got[0]!.message;
      expect(m).toMatchObject({
        id,
        from: 'human',
        to: 'human',
        kind: 'message',
        priority: 'normal',
        summary: 'Build "is" green \\ 100%',
        body,
      });
      // Its id sorts by time among ours: the time part is the current second.
      expect(Math.abs(parseInt(id.slice(0, 9), 36) - Date.now())).toBeLessThan(60_000);
      expect(readdirSync(maildir(f.layout, 'human').tmp)).toEqual([]);
      expect(readdirSync(join(f.layout.inboxRoot, 'human')).includes('bad')).toBe(false);
    } finally {
      await w.close();
    }
  });

  it('refuses inside an agent (FLOTILLA_AGENT_ID set), pointing to flotilla send, and writes nothing', async () => {
    addAgent(f.layout, 'lead-3kd9p1');
    // A raw writer cannot prove which agent it is: it never claims to be one.
    const r = await run(['lead-3kd9p1', 'hello lead'], 'body\n', { FLOTILLA_AGENT_ID: 'worker-7k2m9q' });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe("deliver.sh: inside an agent use 'flotilla send' (it proves who sends)");
    expect(await list(f.layout, 'lead-3kd9p1')).toEqual([]);
    // Outside an agent it sends as a person.
    expect((await run(['lead-3kd9p1', 'hello lead'], 'body\n')).exitCode).toBe(0);
    const items = await list(f.layout, 'lead-3kd9p1');
    expect(items.map((i) => [i.message.from, i.message.to, i.message.summary])).toEqual([
      ['human', 'lead-3kd9p1', 'hello lead'],
    ]);
  });

  it('refuses an unknown or unsafe recipient and writes nothing', async () => {
    expect((await run(['nobody-000000', 'hi'], 'x')).exitCode).toBe(1);
    expect((await run(['../etc', 'hi'], 'x')).exitCode).toBe(2);
    expect(existsSync(join(f.layout.inboxRoot, 'nobody-000000'))).toBe(false);
  });
});
