import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { list } from '../../src/inbox/read.js';
import { CLI } from '../helpers/cli.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import type { VendorFleet } from './helpers.js';
import { TARGETS } from './targets.js';
import { vendorFleets } from './vendor-suite.js';

/**
 * A vendor CLI's permission question in the fleet's approval queue (docs/runtimes.md,
 * "Approvals"): Claude Code, Codex and Gemini CLI, started by spawn-agent in `default` mode exactly as a
 * person's spawn starts them, are told by their model to run a command their CLI asks about.
 * The question reaches the human inbox; `flotilla approve` (run by a person: a shell in a tmux
 * window, descending from no agent) lets the command run — the marker file exists — and
 * `flotilla deny` refuses it — the file never appears and the model reads the reason. Claude
 * Code also shows its own prompt meanwhile: an answer typed there wins and withdraws the
 * queued request. Codex shows its own prompt only once no hook decided, and Gemini's hooks
 * cannot answer at all, so their hook decides nothing and the shim answers the CLI's prompt
 * when the queue is first: an answer in either place wins, and the other is withdrawn.
 */
const fleets = vendorFleets();

const DEFAULT_MODE = 'permissions:\n  permission_mode: default\n';

/** The pending approval request in the human inbox, once it arrives. */
async function pendingRequest(f: VendorFleet, agent: string): Promise<{ requestId: string; summary: string }> {
  return eventually(
    async () => {
      const item = (await list(f.layout, 'human')).find(
        (i) => i.message.kind === 'approval_request' && i.message.from === agent,
      );
      return item?.message.kind === 'approval_request'
        ? { requestId: item.message.request_id, summary: item.message.summary }
        : undefined;
    },
    300_000,
    'the approval request in the human inbox',
  );
}

/**
 * `flotilla <args>` as a person runs it: from a shell in a window of the tmux server (whose
 * processes descend from no agent), with a clean environment. This test process is registered
 * as the parent agent, so a command it started itself would rightly be refused as an agent's.
 */
async function asPerson(f: VendorFleet, args: string[]): Promise<{ exitCode: number; out: string }> {
  const dir = f.home;
  const tag = `person-${Date.now()}`;
  const script = join(dir, `${tag}.sh`);
  const quoted = [process.execPath, CLI, '--root', f.layout.root, ...args]
    .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
    .join(' ');
  writeFileSync(
    script,
    `cd '${f.project}' && env -i PATH='${process.env.PATH ?? '/usr/bin:/bin'}' HOME='${f.home}' XDG_CONFIG_HOME='${f.env.XDG_CONFIG_HOME ?? f.home}' LANG=C.UTF-8 ${quoted} > '${dir}/${tag}.out' 2>&1; echo $? > '${dir}/${tag}.rc'\n`,
  );
  await f.tmux.tmux('new-window', '-d', '-n', tag, `sh '${script}'`);
  const rc = await eventually(
    () => existsSync(join(dir, `${tag}.rc`)) && readFileSync(join(dir, `${tag}.rc`), 'utf8').trim(),
    120_000,
    `flotilla ${args.join(' ')}`,
  );
  return { exitCode: Number(rc), out: readFileSync(join(dir, `${tag}.out`), 'utf8') };
}

const CASES = [
  { name: 'claude' as const, script: 'approve.yaml' },
  { name: 'codex' as const, script: 'approve-escalated.yaml' },
  { name: 'gemini' as const, script: 'approve.yaml' },
];

describe('an approval answered with `flotilla approve` / `deny` reaches the vendor CLI', { timeout: 900_000 }, () => {
  it.each(CASES)('$name: approve → the command runs', async ({ name, script }) => {
    const t = TARGETS[name]();
    const f = await fleets.open({ ...t, script, definitions: { a: DEFAULT_MODE } });
    const id = await f.spawnChild('a', `${name}-approve`, 'make the marker', t.spawnArgs);
    const req = await pendingRequest(f, id);
    expect(req.summary).toContain('touch approve-marker');
    expect(f.record(id).status).toBe('waiting_approval');
    expect(existsSync(join(f.project, 'approve-marker'))).toBe(false);

    const approved = await asPerson(f, ['approve', req.requestId]);
    expect(approved.out).toContain(`approved ${req.requestId}`);
    expect(approved.exitCode).toBe(0);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
    expect(existsSync(join(f.project, 'approve-marker'))).toBe(true);
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('It ran.');
    expect(readAudit(f.layout, { event: 'approval' }).lines).toContainEqual(
      expect.objectContaining({ agent: id, request: req.requestId, decision: 'approved', by: 'cli', via: name }),
    );
    // Answered: the request has left the human inbox.
    expect((await list(f.layout, 'human')).filter((i) => i.message.kind === 'approval_request')).toEqual([]);
  });

  it.each(CASES)('$name: deny → the command never runs, the model reads the reason', async ({ name, script }) => {
    const t = TARGETS[name]();
    const f = await fleets.open({ ...t, script, definitions: { a: DEFAULT_MODE } });
    const id = await f.spawnChild('a', `${name}-deny`, 'make the marker', t.spawnArgs);
    const req = await pendingRequest(f, id);
    const denied = await asPerson(f, ['deny', req.requestId, '--reason', 'denied: no marker files today']);
    expect(denied.exitCode).toBe(0);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
    expect(existsSync(join(f.project, 'approve-marker'))).toBe(false);
    expect(f.vendor.seen()).toContain('no marker files today');
    expect(readAudit(f.layout, { event: 'approval' }).lines).toContainEqual(
      expect.objectContaining({ agent: id, request: req.requestId, decision: 'denied', by: 'cli', via: name }),
    );
  });
});

describe("Claude Code: an answer typed in the CLI's own prompt wins", { timeout: 900_000 }, () => {
  it('Yes in the pane runs the command and withdraws the queued request; a late approve says so', async () => {
    const t = TARGETS.claude();
    const f = await fleets.open({ ...t, script: 'approve.yaml', definitions: { a: DEFAULT_MODE } });
    const id = await f.spawnChild('a', 'claude-pane', 'make the marker', t.spawnArgs);
    const req = await pendingRequest(f, id);
    const pane = () => f.tmux.capture(f.record(id).tmux!.paneId).catch(() => '');
    await eventually(async () => /Do you want to proceed\?/.test(await pane()), 300_000, "Claude's own prompt");
    // Claude's first choice is "Yes".
    await f.tmux.tmux('send-keys', '-t', f.record(id).tmux!.paneId, 'Enter');
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
    expect(existsSync(join(f.project, 'approve-marker'))).toBe(true);
    await eventually(
      async () => (await list(f.layout, 'human')).every((i) => i.message.kind !== 'approval_request'),
      60_000,
      'the request withdrawn',
    );
    expect(readAudit(f.layout, { event: 'approval' }).lines).toContainEqual(
      expect.objectContaining({ agent: id, request: req.requestId, decision: 'withdrawn', by: 'pane' }),
    );
    const late = await asPerson(f, ['approve', req.requestId]);
    expect(late.exitCode).toBe(1);
    expect(late.out).toMatch(/already answered/);
  });
});

/**
 * The CLIs that ask in their own pane only once no hook decided (Codex) or whose hooks cannot answer (Gemini): the shim
 * answers their prompt.
 */
const PANE_CASES = [
  // Codex's prompt footer; its first choice, highlighted, is "Yes, proceed".
  {
    name: 'codex' as const,
    script: 'approve-escalated.yaml',
    append: 'approve-escalated-append.yaml',
    prompt: /Press enter to confirm or esc to cancel/,
  },
  // Gemini's confirmation; its first choice, highlighted, is "Allow once".
  { name: 'gemini' as const, script: 'approve.yaml', append: 'approve-append.yaml', prompt: /Allow once/ },
];

describe.each(PANE_CASES)(
  "$name: its own prompt or the fleet's queue, the first answer wins",
  { timeout: 900_000 },
  ({ name, script, append, prompt }) => {
    async function asking(fixture: string, agent: string) {
      const t = TARGETS[name]();
      const f = await fleets.open({ ...t, script: fixture, definitions: { a: DEFAULT_MODE } });
      const id = await f.spawnChild('a', agent, 'make the marker', t.spawnArgs);
      const req = await pendingRequest(f, id);
      const pane = () => f.tmux.capture(f.record(id).tmux!.paneId).catch(() => '');
      await eventually(async () => prompt.test(await pane()), 300_000, `${name}'s own prompt`);
      return { f, id, req, pane };
    }

    it('Enter on its own prompt runs the command and withdraws the queued request; a late approve says so', async () => {
      const { f, id, req, pane } = await asking(script, `${name}-pane`);
      expect(f.record(id).status).toBe('waiting_approval');
      // As a person does: Enter, and Enter again if the prompt is still there a while later.
      for (let press = 1; press <= 3; press++) {
        await f.tmux.tmux('send-keys', '-t', f.record(id).tmux!.paneId, 'Enter');
        const gone = await eventually(async () => !prompt.test(await pane()), 20_000, 'the prompt to close').then(
          () => true,
          () => false,
        );
        if (gone) break;
        console.warn(`${name}'s prompt still showed 20 s after Enter ${press}: pressed again`);
      }
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
      expect(existsSync(join(f.project, 'approve-marker'))).toBe(true);
      expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('It ran.');
      await eventually(
        async () => (await list(f.layout, 'human')).every((i) => i.message.kind !== 'approval_request'),
        60_000,
        'the request withdrawn',
      );
      expect(readAudit(f.layout, { event: 'approval' }).lines).toContainEqual(
        expect.objectContaining({ agent: id, request: req.requestId, decision: 'withdrawn', by: 'pane', via: name }),
      );
      const late = await asPerson(f, ['approve', req.requestId]);
      expect(late.exitCode).toBe(1);
      expect(late.out).toMatch(/already answered/);
    });

    it('approve from the queue answers the prompt in the pane: the command runs, the prompt is gone', async () => {
      const { f, id, req, pane } = await asking(script, `${name}-queue`);
      // The person's queue lists the question while the CLI's own prompt is on screen.
      const queue = await asPerson(f, ['inbox']);
      expect(queue.out).toContain(`${id} asks to run $ touch approve-marker`);
      const approved = await asPerson(f, ['approve', req.requestId]);
      expect(approved.exitCode).toBe(0);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
      expect(existsSync(join(f.project, 'approve-marker'))).toBe(true);
      expect(prompt.test(await pane())).toBe(false);
      expect(f.record(id).status).not.toBe('waiting_approval');
    });

    it('deny from the queue closes the prompt; the model reads the reason', async () => {
      const { f, id, req, pane } = await asking(script, `${name}-queue-deny`);
      const denied = await asPerson(f, ['deny', req.requestId, '--reason', 'no marker files today']);
      expect(denied.exitCode).toBe(0);
      await eventually(
        () => f.vendor.seen().includes('no marker files today'),
        300_000,
        'the reason sent to the model',
      );
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
      expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('no marker files today');
      expect(existsSync(join(f.project, 'approve-marker'))).toBe(false);
      expect(prompt.test(await pane())).toBe(false);
    });

    it('answered in both places at once: the command runs exactly once, one answer is recorded', async () => {
      const { f, id, req } = await asking(append, `${name}-both`);
      const [, late] = await Promise.all([
        f.tmux.tmux('send-keys', '-t', f.record(id).tmux!.paneId, 'Enter'),
        asPerson(f, ['approve', req.requestId]),
      ]);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
      expect(readFileSync(join(f.project, 'approve-marker'), 'utf8')).toBe('ran\n');
      const settled = readAudit(f.layout, { event: 'approval' }).lines.filter(
        (l) => l.request === req.requestId && l.agent === id,
      );
      // The fleet's own line (the shim's) is one; `flotilla approve` adds its own only when it won.
      expect(settled.filter((l) => l.via === name)).toHaveLength(1);
      expect([0, 1]).toContain(late.exitCode);
      expect((await list(f.layout, 'human')).filter((i) => i.message.kind === 'approval_request')).toEqual([]);
    });

    it('nobody answers within agents.approval_timeout_secs: the shim refuses on the prompt, the model reads why', async () => {
      const t = TARGETS[name]();
      const f = await fleets.open({ ...t, script, definitions: { a: DEFAULT_MODE } });
      // A short timeout, so the test does not wait the default 300 s.
      writeFileSync(
        f.layout.configFile,
        readFileSync(f.layout.configFile, 'utf8').replace('agents:\n', 'agents:\n  approval_timeout_secs: 8\n'),
      );
      const id = await f.spawnChild('a', `${name}-timeout`, 'make the marker', t.spawnArgs);
      const req = await pendingRequest(f, id);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
      expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('nobody answered within 8s');
      expect(existsSync(join(f.project, 'approve-marker'))).toBe(false);
      expect(readAudit(f.layout, { event: 'approval' }).lines).toContainEqual(
        expect.objectContaining({ agent: id, request: req.requestId, decision: 'denied', by: 'timeout', via: name }),
      );
      expect((await list(f.layout, 'human')).filter((i) => i.message.kind === 'approval_request')).toEqual([]);
    });

    it('approve --always: the next call of that tool runs without a question', async () => {
      const { f, id, req } = await asking('approve-twice.yaml', `${name}-always`);
      expect((await asPerson(f, ['approve', '--always', req.requestId])).exitCode).toBe(0);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 300_000, 'the completion');
      expect(readFileSync(join(f.project, 'approve-marker'), 'utf8')).toBe('ran\nran\n');
      expect(
        (await list(f.layout, 'human', { includeRead: true })).filter((i) => i.message.kind === 'approval_request'),
      ).toHaveLength(1);
      expect(readAudit(f.layout, { event: 'approval' }).lines).toContainEqual(
        expect.objectContaining({ agent: id, decision: 'approved', by: 'always', via: name }),
      );
    });
  },
);
