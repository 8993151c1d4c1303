import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { readTask } from '../../src/tasks/store.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import type { VendorFleet } from './helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

/**
 * Vendor teammates (docs/design.md §15, `auto_claim`; docs/hooks.md "Team hooks"): a Claude,
 * a Codex and a Gemini agent, each started by spawn-agent exactly as a person's spawn starts it
 * and with no prompt, find two tasks on their board and work them one after the other. What
 * the user gets: each task done by that agent with its own model's answer, which quotes the
 * task's several-line body (the model saw it: the fake server's requests), one claim and one
 * completion per task in the audit; the TeammateIdle hook once per idle spell, in a cleared
 * environment, its exit 2 handing the agent its words. And a teammate whose CLI is SIGKILLed
 * while it holds a task gives the task back.
 */

const fleets = vendorFleets();

interface ShownTask {
  id: string;
  status: string;
  claimed_by: string | null;
  claimed_at: string | null;
  finished_at: string | null;
  result: string | null;
  notes: { text: string }[];
}

/** Records each run (its environment, its stdin); the first run exits 2 with words for the agent. */
const IDLE_HOOK =
  'env > idle.env; { cat; echo; } >> idle.jsonl; if [ ! -e idle-once ]; then touch idle-once; echo "review docs/api.md next" >&2; exit 2; fi';

async function show(f: VendorFleet, id: string): Promise<ShownTask> {
  const r = await f.flotilla(['task', 'show', id, '--json']);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as ShownTask;
}

/** The task as it is on disk now (polled; `task show` is what the user runs, for the assertions). */
function statusOf(f: VendorFleet, id: string): string | undefined {
  return readTask(f.layout.board('fleet'), id)?.status;
}

function idleRuns(f: VendorFleet): Record<string, unknown>[] {
  const file = join(f.project, 'idle.jsonl');
  if (!existsSync(file)) return [];
  // Whole lines only: a run still writing has no final newline yet.
  return readFileSync(file, 'utf8')
    .split('\n')
    .slice(0, -1)
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('a vendor teammate works its board', { timeout: 900_000 }, () => {
  it.each([
    ['claude', 'definition'],
    ['codex', 'flag'],
    ['gemini', 'definition'],
  ] as const)(
    '%s (auto_claim from its %s) works two tasks in turn; TeammateIdle once per idle spell',
    async (name, from) => {
      const t = TARGETS[name]();
      const f = await fleets.open({
        ...t,
        script: 'teammate.yaml',
        definitions: { mate: `${DONT_ASK}${from === 'definition' ? 'auto_claim: true\n' : ''}` },
        config: `hooks:\n  teammate_idle:\n    - command: ${JSON.stringify(IDLE_HOOK)}\n`,
      });
      for (const [id, title, body] of [
        ['vt1', 'weigh the widgets', 'There are 42 widgets in the crate.\nEach weighs 3 kg.\nReport the total weight.'],
        ['vt2', 'name the crate', 'The crate is labelled ZEBRA-7.\nIt sits in bay 4.'],
      ]) {
        const added = await f.flotilla(['task', 'add', title!, '--id', id!, '--body', body!]);
        expect(added.exitCode, added.stderr).toBe(0);
      }
      const spawned = await f.spawnAgent([
        '--agent',
        'mate',
        '--id',
        `${name}-mate`,
        ...(from === 'flag' ? ['--auto-claim'] : []),
        ...t.spawnArgs,
      ]);
      expect(spawned.exitCode, spawned.stderr).toBe(0);
      const id = spawned.stdout.trim();

      await eventually(
        () => statusOf(f, 'vt1') === 'done' && statusOf(f, 'vt2') === 'done',
        600_000,
        'both tasks done',
      );
      const [vt1, vt2] = [await show(f, 'vt1'), await show(f, 'vt2')];
      expect(vt1).toMatchObject({ status: 'done', claimed_by: id });
      expect(vt2).toMatchObject({ status: 'done', claimed_by: id });
      // One after the other: the second claimed once the first was done.
      expect(Date.parse(vt2.claimed_at!)).toBeGreaterThanOrEqual(Date.parse(vt1.finished_at!));
      // Each result is the model's own answer to that task, which its script gives only when the
      // model's input held that task with every line of its body (fixtures/runtimes/teammate.yaml).
      expect(vt1.result).toBe('vt1 answered: 42 widgets at 3 kg each weigh 126 kg.');
      expect(vt2.result).toBe('vt2 answered: the crate is ZEBRA-7, in bay 4.');
      expect(f.vendor.seen()).toMatch(
        /There are 42 widgets in the crate\.\r?\nEach weighs 3 kg\.\r?\nReport the total weight\./,
      );
      expect(readAudit(f.layout, { event: 'task_claimed' }).lines).toEqual([
        expect.objectContaining({ agent: id, task: 'vt1' }),
        expect.objectContaining({ agent: id, task: 'vt2' }),
      ]);
      // The board is written, then the audit line: the test can read between the two.
      await eventually(() => readAudit(f.layout, { event: 'task_done' }).lines.length >= 2, 30_000, 'both audited');
      expect(readAudit(f.layout, { event: 'task_done' }).lines).toEqual([
        expect.objectContaining({ agent: id, task: 'vt1' }),
        expect.objectContaining({ agent: id, task: 'vt2' }),
      ]);

      // Idle with nothing to claim: the hook ran (not between the two tasks); its exit 2 was the
      // agent's next task, after which it ran once more and let the agent rest.
      await eventually(
        () => idleRuns(f).length >= 2,
        300_000,
        'the TeammateIdle hook after the board and after its own words',
      );
      await new Promise((r) => setTimeout(r, 3000));
      const runs = idleRuns(f);
      expect(runs).toEqual([
        expect.objectContaining({
          hook_event_name: 'TeammateIdle',
          agent_id: id,
          agent_name: 'mate',
          parent_id: 'lead-parent',
          last_task: expect.objectContaining({ task: 2, status: 'completed' }),
        }),
        expect.objectContaining({
          hook_event_name: 'TeammateIdle',
          agent_id: id,
          last_task: expect.objectContaining({ task: 3, status: 'completed' }),
        }),
      ]);
      expect(f.vendor.seen()).toMatch(/<inbox-message [^>]*>\s*review docs\/api\.md next/);
      const envText = readFileSync(join(f.project, 'idle.env'), 'utf8');
      const env = Object.fromEntries(
        envText
          .split('\n')
          .filter(Boolean)
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      expect(
        Object.keys(env)
          .filter((k) => k !== 'PWD')
          .sort(),
      ).toEqual(['FLOTILLA_AGENT_ID', 'FLOTILLA_AGENT_NAME', 'FLOTILLA_PARENT_ID', 'PATH']);
      expect(env).toMatchObject({
        FLOTILLA_AGENT_ID: id,
        FLOTILLA_AGENT_NAME: 'mate',
        FLOTILLA_PARENT_ID: 'lead-parent',
        PWD: f.project,
      });
      for (const v of Object.values(t.env(f.vendor.url))) expect(envText).not.toContain(v);

      // One completion per task: the two board tasks and the hook's.
      const done = completionsFrom(f, 'lead-parent', id);
      expect(done.map((m) => m.status)).toEqual(['completed', 'completed', 'completed']);
      expect(f.record(id)).toMatchObject({ status: 'idle', lastTask: expect.objectContaining({ task: 3 }) });
    },
  );

  it.each(RUNTIMES)(
    'a %s teammate whose answer the TaskCompleted hook refuses is told why and its next answer is the result',
    async (name) => {
      const t = TARGETS[name]();
      const gate = 'if [ ! -e gate-once ]; then touch gate-once; echo "add the units" >&2; exit 2; fi';
      const f = await fleets.open({
        ...t,
        script: 'teammate-gate.yaml',
        definitions: { mate: `${DONT_ASK}auto_claim: true\n` },
        config: `hooks:\n  task_completed:\n    - command: ${JSON.stringify(gate)}\n`,
      });
      const added = await f.flotilla([
        'task',
        'add',
        'weigh the widgets',
        '--id',
        'vt1',
        '--body',
        'There are 42 widgets of 3 kg.',
      ]);
      expect(added.exitCode, added.stderr).toBe(0);
      const id = (await f.spawnAgent(['--agent', 'mate', '--id', `${name}-gate`, ...t.spawnArgs])).stdout.trim();

      await eventually(() => statusOf(f, 'vt1') === 'done', 300_000, 'the task done after the refusal');
      const task = await show(f, 'vt1');
      expect(task).toMatchObject({ status: 'done', claimed_by: id, result: 'vt1 again: the widgets weigh 126 kg.' });
      expect(task.notes.map((n) => n.text)).toEqual(['completion refused: add the units']);
      expect(f.vendor.seen()).toMatch(
        /<inbox-message [^>]*>\s*refused: the TaskCompleted hook kept task vt1 open: add the units/,
      );
      expect(readAudit(f.layout, { event: 'task_refused' }).lines).toEqual([
        expect.objectContaining({ agent: id, task: 'vt1' }),
      ]);
      await eventually(() => readAudit(f.layout, { event: 'task_done' }).lines.length > 0, 30_000, 'the done audited');
      expect(readAudit(f.layout, { event: 'task_done' }).lines).toEqual([
        expect.objectContaining({ agent: id, task: 'vt1' }),
      ]);
      expect(readAudit(f.layout, { event: 'task_claimed' }).lines).toHaveLength(1);
    },
  );

  it.each(RUNTIMES)('a %s teammate whose CLI is SIGKILLed while it holds a task gives the task back', async (name) => {
    const t = TARGETS[name]();
    const f = await fleets.open({
      ...t,
      script: 'teammate-sleeper.yaml',
      definitions: { mate: `${DONT_ASK}auto_claim: true\n` },
    });
    const added = await f.flotilla(['task', 'add', 'sleep on it', '--id', 'vt1', '--body', 'Take your time.']);
    expect(added.exitCode, added.stderr).toBe(0);
    const id = (await f.spawnAgent(['--agent', 'mate', '--id', `${name}-kill`, ...t.spawnArgs])).stdout.trim();
    await eventually(
      () => statusOf(f, 'vt1') === 'claimed' && f.vendor.prompts.length >= 1 && !!f.cliPid(id),
      300_000,
      'the task claimed and worked',
    );
    process.kill(f.cliPid(id)!, 'SIGKILL');

    await eventually(() => f.record(id).status === 'crashed', 120_000, 'the agent ended crashed');
    await eventually(() => statusOf(f, 'vt1') === 'open', 120_000, 'the task reopened');
    const task = await show(f, 'vt1');
    expect(task).toMatchObject({ status: 'open', claimed_by: null, result: null });
    expect(task.notes.map((n) => n.text)).toEqual([
      expect.stringMatching(new RegExp(`^reopened: its claimant ${id} ended \\(.*killed \\(SIGKILL\\)`)),
    ]);
    expect(readAudit(f.layout, { event: 'task_reopened' }).lines).toEqual([
      expect.objectContaining({ agent: id, task: 'vt1' }),
    ]);
    expect(readAudit(f.layout, { event: 'task_done' }).lines).toEqual([]);
    // Still open a moment later: nobody holds it, and anyone may claim it.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await show(f, 'vt1')).toMatchObject({ status: 'open', claimed_by: null });
    const claimed = await f.flotilla(['task', 'claim', 'vt1']);
    expect(claimed.exitCode, claimed.stderr).toBe(0);
  });
});
