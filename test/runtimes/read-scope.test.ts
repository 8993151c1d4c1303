import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

/**
 * The read scope in a real vendor CLI (docs/security.md, "What reads may touch"): Claude Code
 * and Gemini CLI, started by spawn-agent exactly as a person's spawn starts them, in
 * dont_ask, are told by their model (the fake vendor API replaying read-key.yaml) to read a
 * key through a link in the project into the fresh HOME's ~/.ssh, then a file in the fleet's
 * secrets folder. Claude Code would read both on its own (reads are allowed); Gemini CLI
 * refuses the link itself (it resolves links and keeps to its workspace) but would read the
 * secrets folder, which is inside the project. What stops them is the fleet's pre-tool hook:
 * the model sees the refusal and never the key. Codex has no read tool its hooks see (it
 * reads through its shell), so it has no case here.
 */
const KEY = 'FAKE-PRIVATE-KEY-4711';

const fleets = vendorFleets(() => {
  delete process.env.RS_KEY_PATH;
  delete process.env.RS_SECRET_PATH;
  delete process.env.RS_OUTSIDE_PATH;
});

describe("a vendor CLI's own read of a credentials folder is refused by the fleet's hook", { timeout: 600_000 }, () => {
  it.each(['claude', 'gemini'] as const)('%s', async (name) => {
    const t = TARGETS[name]();
    const f = await fleets.open({
      ...t,
      script: 'read-key.yaml',
      definitions: { a: DONT_ASK },
    });
    mkdirSync(join(f.home, '.ssh'), { recursive: true });
    writeFileSync(join(f.home, '.ssh', 'id_ed25519'), `${KEY}\n`);
    symlinkSync(join(f.home, '.ssh'), join(f.project, 'keys'));
    // The fake vendor renders the script's {{env.…}} from this process's environment.
    process.env.RS_KEY_PATH = join(f.project, 'keys', 'id_ed25519');
    // The fleet's secrets folder is inside the project, so inside every CLI's workspace.
    mkdirSync(f.layout.secretsDir, { recursive: true });
    writeFileSync(join(f.layout.secretsDir, 'grant.txt'), `${KEY}\n`);
    process.env.RS_SECRET_PATH = join(f.layout.secretsDir, 'grant.txt');

    const id = await f.spawnChild('a', `${name}-read-key`, 'read the key', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the completion');
    const body = completionsFrom(f, 'lead-parent', id)[0]!.body;
    expect(f.vendor.seen()).toMatch(/among the person's credentials, which no agent reads/);
    expect(f.vendor.seen()).not.toContain(KEY);
    expect(body).toMatch(/Final answer: .*person's credentials/);
    expect(body).not.toContain(KEY);
    expect(readAudit(f.layout, { event: 'policy_denied' }).lines).toContainEqual(
      expect.objectContaining({ agent: id, tool: 'read', rule: 'read-scope:credentials', via: name }),
    );
  });
});

describe(
  "a vendor CLI's read outside the project asks its person through the CLI's own prompt",
  { timeout: 600_000 },
  () => {
    it('claude, default mode: Claude Code asks in its pane (the hook said ask); the answer decides', async () => {
      const t = TARGETS.claude();
      const f = await fleets.open({
        ...t,
        script: 'read-outside.yaml',
        definitions: { a: 'permissions:\n  permission_mode: default\n' },
      });
      const outside = join(f.home, 'elsewhere');
      mkdirSync(outside, { recursive: true });
      writeFileSync(join(outside, 'notes.txt'), 'ELSEWHERE-TEXT-1\n');
      process.env.RS_OUTSIDE_PATH = join(outside, 'notes.txt');

      const id = await f.spawnChild('a', 'claude-read-outside', 'read the notes', t.spawnArgs);
      const pane = () => f.tmux.capture(f.record(id).tmux!.paneId).catch(() => '');
      await eventually(async () => /Do you want to proceed\?/.test(await pane()), 300_000, "Claude's question");
      // The fleet's hook said ask (Claude's own rule for a folder outside its working one agrees).
      await eventually(
        () =>
          readAudit(f.layout, { event: 'tool_call' }).lines.some(
            (l) => l.agent === id && l.rule === 'read-scope:outside',
          ),
        60_000,
        "the hook's audit line",
      );
      expect(readAudit(f.layout, { event: 'tool_call' }).lines).toContainEqual(
        expect.objectContaining({
          agent: id,
          tool: 'read',
          decision: 'ask',
          rule: 'read-scope:outside',
          via: 'claude',
        }),
      );
      expect(f.vendor.seen()).not.toContain('ELSEWHERE-TEXT-1');
      // Claude's first choice is "Yes".
      await f.tmux.tmux('send-keys', '-t', f.record(id).tmux!.paneId, 'Enter');
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
      expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toMatch(/Final answer: .*ELSEWHERE-TEXT-1/);
    });
  },
);
