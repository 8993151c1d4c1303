import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readMeta } from '../../src/transcript/meta.js';
import { readTranscript } from '../../src/transcript/reader.js';
import { fixture, scriptCalls, userTexts } from '../helpers/scripts.js';
import { eventually, tmuxServer } from '../helpers/tmux.js';
import { bannerId, project, type Project } from '../hooks-e2e/project.js';

const TWO_STEP = fixture('resume/two-step.yaml');

describe('flotilla resume (one-shot, in this process)', () => {
  let p: Project;
  beforeEach(() => {
    p = project('flotilla-resume-');
    p.agent('worker', { permissions: { permission_mode: 'dont_ask' } });
  });
  afterEach(() => p.cleanup());

  async function firstRun(): Promise<string> {
    const r = await p.run([
      'run',
      '--agent',
      'worker',
      '--model',
      `script:${TWO_STEP}`,
      '--oneshot',
      'count the things',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe('First answer: first-run-output');
    return bannerId(r.stderr);
  }

  it('starts a new agent whose first model input is the whole old history plus the new prompt', async () => {
    const oldId = await firstRun();
    const log = join(p.project, 'calls.jsonl');
    const res = await p.run(['resume', oldId.slice(0, -2), '--oneshot', 'now count the others'], {
      env: { FLOTILLA_SCRIPT_LOG: log },
    });
    expect(res.exitCode, res.stderr).toBe(0);
    const newId = bannerId(res.stderr);
    expect(newId).not.toBe(oldId);
    expect(newId.startsWith('worker-')).toBe(true);
    expect(res.stderr).toContain(`Resuming ${oldId} (worker) with 4 messages as ${newId}`);
    // The script went on where the conversation was: its third reply, quoting the new turn.
    expect(res.stdout).toBe('Continuing with: now count the others');

    const calls = scriptCalls(log);
    expect(calls.length).toBe(1);
    const prompt = calls[0]!.prompt.filter((m) => m.role !== 'system');
    expect(prompt.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(userTexts(calls[0]!)).toEqual(['count the things', 'now count the others']);
    expect(JSON.stringify(prompt[2])).toContain('first-run-output');
    expect(JSON.stringify(prompt[3])).toContain('First answer: first-run-output');

    // Registry, sidecar and transcript header all name the agent it came from.
    expect(p.record(newId).resumedFrom).toBe(oldId);
    expect(readMeta(p.layout, newId).resumed_from).toBe(oldId);
    expect(readMeta(p.layout, oldId).resumed_from).toBeNull();
    const t = readTranscript(p.layout, newId);
    expect(t.header.resumed_from).toBe(oldId);
    // The new transcript starts with the old conversation, so it can be resumed on its own.
    const old = readTranscript(p.layout, oldId).entries.filter((e) => e.type !== 'end');
    expect(t.entries.slice(0, old.length).map((e) => e.type === 'message' && e.message.role)).toEqual(
      old.map((e) => e.type === 'message' && e.message.role),
    );
    expect(p.record(newId).name).toBe('worker');
    expect(p.record(newId).parentId).toBeNull();
    expect(p.record(newId).depth).toBe(0);
  });

  it('forms a chain that transcript --chain walks from either end, each entry once', async () => {
    const a = await firstRun();
    const rb = await p.run(['resume', a, '--oneshot', 'second round']);
    expect(rb.exitCode, rb.stderr).toBe(0);
    const b = bannerId(rb.stderr);
    const rc = await p.run(['resume', b, '--oneshot', 'third round']);
    expect(rc.exitCode, rc.stderr).toBe(0);
    const c = bannerId(rc.stderr);
    expect(rc.stderr).toContain(`Resuming ${b} (worker) with 6 messages as ${c}`);
    expect(readMeta(p.layout, c).resumed_from).toBe(b);
    expect(readMeta(p.layout, b).resumed_from).toBe(a);

    for (const from of [a, b, c]) {
      const chain = await p.run(['transcript', '--chain', from]);
      expect(chain.exitCode, chain.stderr).toBe(0);
      const out = chain.stdout;
      const headers = [...out.matchAll(/^━━ (\S+) · worker/gm)].map((m) => m[1]);
      expect(headers).toEqual([a, b, c]);
      expect(out).toContain(`resumed from ${a}`);
      expect(out).toContain(`resumed from ${b}`);
      // The first task appears once although b and c carry copies of it.
      expect(out.match(/count the things/g)?.length).toBe(1);
      expect(out).toContain('second round');
      expect(out).toContain('third round');
    }
    const json = await p.run(['transcript', '--chain', '--json', c]);
    const records = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; agent_id?: string });
    expect(records.filter((r) => r.type === 'header').map((r) => r.agent_id)).toEqual([a, b, c]);
  });

  it('refuses with a clear error and spawns nothing when the transcript is missing or corrupt', async () => {
    const id = await firstRun();
    const before = p.ids();
    writeFileSync(
      p.layout.transcript(id),
      readFileSync(p.layout.transcript(id), 'utf8').replace(/\n(\{"seq":2[^\n]*)\n/, '\n{"seq":2, broken\n'),
    );
    const corrupt = await p.run(['resume', id, '--oneshot', 'go on']);
    expect(corrupt.exitCode).toBe(1);
    expect(corrupt.stderr).toMatch(
      new RegExp(`^flotilla: cannot resume '${id}': its transcript is corrupt at line 3 \\(not JSON`),
    );
    expect(corrupt.stderr.trim().split('\n')).toHaveLength(1);

    writeFileSync(p.layout.transcript(id), 'not json at all\n');
    const header = await p.run(['resume', id, '--oneshot', 'go on']);
    expect(header.exitCode).toBe(1);
    expect(header.stderr).toContain(
      `cannot resume '${id}': transcript for '${id}' is corrupt: its first line is not JSON`,
    );

    const { rmSync } = await import('node:fs');
    rmSync(p.layout.transcript(id));
    const missing = await p.run(['resume', id, '--oneshot', 'go on']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain(`cannot resume '${id}': transcript for '${id}' is missing`);

    const unknown = await p.run(['resume', 'nobody', '--oneshot', 'go on']);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain("no agent matches 'nobody'");
    expect(p.ids()).toEqual(before);
  });

  it('refuses when transcripts are disabled, saying why', async () => {
    const id = await firstRun();
    p.config({ transcripts: { enabled: false } });
    const r = await p.run(['resume', id, '--oneshot', 'go on']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('cannot resume: transcripts are disabled (transcripts.enabled: false in the config)');
    expect(p.ids()).toEqual([id]);
  });

  it('needs a prompt to resume one-shot', async () => {
    const id = await firstRun();
    const r = await p.run(['resume', id, '--oneshot'], { input: '' });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('no prompt given');
    expect(p.ids()).toEqual([id]);
  });
});

describe('flotilla resume (in a tmux window, like spawn)', () => {
  it('opens the new agent in a window on the fleet session, prints its id, and runs the prompt there', async () => {
    const p = project('flotilla-resume-tmux-');
    const tmux = tmuxServer();
    try {
      p.agent('worker', { permissions: { permission_mode: 'dont_ask' } });
      const first = await p.run([
        'run',
        '--agent',
        'worker',
        '--model',
        `script:${TWO_STEP}`,
        '--oneshot',
        'count the things',
      ]);
      expect(first.exitCode, first.stderr).toBe(0);
      const oldId = bannerId(first.stderr);
      const env = { FLOTILLA_TMUX_SOCKET: tmux.socket };
      const r = await p.run(['resume', oldId, 'keep going in a window'], { env });
      expect(r.exitCode, r.stderr).toBe(0);
      const newId = r.stdout.trim();
      expect(r.stderr).toContain(`Resuming ${oldId} (worker) with 4 messages as ${newId}`);
      const rec = p.record(newId);
      expect(rec.tmux?.paneId).toMatch(/^%\d+$/);
      expect(rec.mode).toBe('interactive');
      expect(rec.resumedFrom).toBe(oldId);
      expect(await tmux.tmux('list-windows', '-a', '-F', '#{window_name}')).toContain(newId);
      const done = await eventually(() => p.record(newId).lastTask?.status, 20_000, 'the resumed task to end');
      expect(done).toBe('completed');
      expect(readFileSync(p.layout.output(newId), 'utf8')).toBe('Continuing with: keep going in a window');
      // A persistent agent stays for more input; cancelling it ends it.
      expect(p.record(newId).status).toBe('idle');
      process.kill(p.record(newId).pid!, 'SIGTERM');
      await eventually(() => p.record(newId).status === 'cancelled', 20_000, 'the agent to end');
    } finally {
      await tmux.kill();
      p.cleanup();
    }
  });
});

describe('who the resumed agent belongs to', () => {
  it('keeps the old parent while that parent is alive, and is a root once it has ended', async () => {
    const p = project('flotilla-resume-parent-');
    try {
      // The lead runs its child with `flotilla run` from its own shell: under the default
      // sandbox its harness runs it through the door, as the lead's child (docs/security.md).
      p.agent('worker', { permissions: { permission_mode: 'dont_ask' } });
      p.agent('lead', { permissions: { permission_mode: 'dont_ask' } });
      const lead = p.start(
        ['run', '--agent', 'lead', '--model', `script:${fixture('resume/parent.yaml')}`, '--oneshot', 'lead the work'],
        { env: { CHILD_SCRIPT: TWO_STEP } },
      );
      const child = await eventually(
        () =>
          p
            .ids()
            .map((i) => p.record(i))
            .find((r) => r.parentId !== null && r.status === 'completed'),
        20_000,
        'the child to complete',
      );
      const leadId = child.parentId!;
      expect(p.record(leadId).status).toBe('working');

      const r1 = await p.run(['resume', child.id, '--oneshot', 'one more thing']);
      expect(r1.exitCode, r1.stderr).toBe(0);
      const again = p.record(bannerId(r1.stderr));
      expect(again.parentId).toBe(leadId);
      expect(again.depth).toBe(1);
      expect(again.rootId).toBe(leadId);

      process.kill(p.record(leadId).pid!, 'SIGTERM');
      await lead;
      expect(p.record(leadId).status).toBe('cancelled');
      const r2 = await p.run(['resume', child.id, '--oneshot', 'and another']);
      expect(r2.exitCode, r2.stderr).toBe(0);
      const root = p.record(bannerId(r2.stderr));
      expect(root.parentId).toBeNull();
      expect(root.depth).toBe(0);
      expect(root.spawnedBy).toBe('human');
    } finally {
      p.cleanup();
    }
  });

  it('--background opens a detached headless agent and prints its id', async () => {
    const p = project('flotilla-resume-bg-');
    try {
      p.agent('worker', { permissions: { permission_mode: 'dont_ask' } });
      const first = await p.run([
        'run',
        '--agent',
        'worker',
        '--model',
        `script:${TWO_STEP}`,
        '--oneshot',
        'count the things',
      ]);
      const oldId = bannerId(first.stderr);
      const r = await p.run(['resume', oldId, '--background', '--json', 'in the background']);
      expect(r.exitCode, r.stderr).toBe(0);
      const rec = JSON.parse(r.stdout) as { id: string; tmux: unknown; resumedFrom: string };
      expect(rec.tmux).toBeNull();
      expect(rec.resumedFrom).toBe(oldId);
      await eventually(() => p.record(rec.id).lastTask?.status === 'completed', 20_000, 'the background task');
      expect(readFileSync(p.layout.output(rec.id), 'utf8')).toBe('Continuing with: in the background');
      process.kill(p.record(rec.id).pid!, 'SIGTERM');
      await eventually(() => p.record(rec.id).status !== 'idle', 20_000, 'the agent to end');
    } finally {
      p.cleanup();
    }
  });
});
