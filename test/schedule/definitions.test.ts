import { execa, type ResultPromise } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRecord } from '../../src/fleet/record.js';
import { CLI } from '../helpers/cli.js';
import { eventually } from '../helpers/tmux.js';
import { trustProject } from '../helpers/trust.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * Schedules beyond `flotilla schedule add` (§5.10): a definition's `schedule:` block (fired
 * by `flotilla up`'s scheduler window, live, only in a trusted folder), `notify:`, and the
 * schedule seen in `status` and `audit --schedule`.
 */

const holds = (check: () => unknown, ms?: number): Promise<true> =>
  eventually(async () => {
    await check();
    return true as const;
  }, ms);
const script = (name: string): string => fileURLToPath(new URL(`../fixtures/schedule/${name}`, import.meta.url));

let f: SpawnFleet | undefined;
const schedulers: ResultPromise[] = [];
afterEach(async () => {
  for (const s of schedulers.splice(0)) s.kill('SIGKILL');
  await Promise.allSettled(schedulers);
  await f?.close();
  f = undefined;
});

/** A definition file with a `schedule:` block every two seconds (headless runs, no catch-up). */
function scheduled(fleet: SpawnFleet, name: string, task: string): void {
  writeFileSync(
    join(fleet.layout.agentsDir, `${name}.md`),
    [
      '---',
      `name: ${name}`,
      `description: runs on a schedule`,
      `model: script:${script('answer.yaml')}`,
      'schedule:',
      '  cron: "*/2 * * * * *"',
      `  task: "${task}"`,
      '  overlap: allow',
      '  catch_up: none',
      '  background: true',
      '---',
      `You are ${name}.`,
      '',
    ].join('\n'),
  );
}

const runsOf = (fleet: SpawnFleet, schedule: string): AgentRecord[] =>
  fleet.records().filter((r) => r.schedule?.name === schedule);

describe("a definition's schedule: block", () => {
  it('fires from the window flotilla up opens, as roots of that definition; is seen live, listed with its file, paused by name, never removed by rm', async () => {
    f = spawnFleet();
    const fleet = f;
    scheduled(fleet, 'ticker', 'tick');
    const list = await fleet.flotilla(['schedule', 'list']);
    expect(list.stderr).toBe('');
    expect(list.stdout).toMatch(
      new RegExp(
        `^ticker  \\*/2 \\* \\* \\* \\* \\*  ticker  next \\S+  last: no run yet  \\(from ${join(fleet.layout.agentsDir, 'ticker.md').replace(/[.]/g, '\\.')}\\)$`,
        'm',
      ),
    );

    const up = await fleet.flotilla(['up', '--detach', '--model', `script:${script('answer.yaml')}`]);
    expect(up.exitCode, up.stderr).toBe(0);
    expect(await fleet.windows()).toContain('schedule');
    await holds(() => expect(runsOf(fleet, 'ticker').length).toBeGreaterThanOrEqual(2), 90_000);
    for (const r of runsOf(fleet, 'ticker'))
      expect(r).toMatchObject({ name: 'ticker', depth: 0, parentId: null, spawnedBy: 'cron' });

    // Added while the scheduler runs: seen without a restart.
    scheduled(fleet, 'later', 'tock');
    await holds(() => expect(runsOf(fleet, 'later').length).toBeGreaterThanOrEqual(1), 90_000);

    const rm = await fleet.flotilla(['schedule', 'rm', 'ticker']);
    expect(rm.exitCode).toBe(1);
    expect(rm.stderr.trim()).toBe(
      `flotilla: schedule 'ticker' comes from ${join(fleet.layout.agentsDir, 'ticker.md')} — remove its schedule: block there (or pause it: flotilla schedule pause ticker)`,
    );

    // Paused: 'later' goes on firing, 'ticker' starts nothing more.
    expect((await fleet.flotilla(['schedule', 'pause', 'ticker'])).exitCode).toBe(0);
    // A ticker slot the scheduler claimed just before the pause may still start: counted from
    // once 'later' has fired after the pause, the scheduler has gone past it.
    const laterAtPause = runsOf(fleet, 'later').length;
    await holds(() => expect(runsOf(fleet, 'later').length).toBeGreaterThan(laterAtPause), 90_000);
    await holds(
      () =>
        expect(fleet.records().filter((r) => r.schedule?.name === 'ticker' && r.status !== 'completed')).toEqual([]),
      30_000,
    );
    const tickerRuns = runsOf(fleet, 'ticker').length;
    const laterRuns = runsOf(fleet, 'later').length;
    await holds(() => expect(runsOf(fleet, 'later').length).toBeGreaterThanOrEqual(laterRuns + 3), 90_000);
    expect(runsOf(fleet, 'ticker')).toHaveLength(tickerRuns);

    // Seen like every other agent: the dashboard and status list the schedules, audit --schedule shows one schedule's
    // runs and nothing else.
    const panes = (await fleet.tmux.tmux('list-panes', '-a', '-F', '#{window_name} #{pane_id}')).split('\n');
    const dashboard = panes.find((l) => l.startsWith('dashboard '))!.split(' ')[1]!;
    await fleet.tmux.waitFor(
      dashboard,
      /Schedules \(scheduler running\):\n +later +\*\/2 \* \* \* \* \* +next \S+ +last: completed[^\n]*\n +ticker +\*\/2 \* \* \* \* \* +paused +last: completed/,
      30_000,
    );
    // status lists them too, audit --schedule shows one schedule's runs and nothing else.
    const status = await fleet.flotilla(['status']);
    expect(status.stdout).toMatch(/^Schedules \(scheduler running\):$/m);
    expect(status.stdout).toMatch(/^ {2}later {2}\*\/2 \* \* \* \* \* {2}next \S+ {2}last: completed \(later-\S+\)$/m);
    expect(status.stdout).toMatch(/^ {2}ticker {2}\*\/2 \* \* \* \* \* {2}paused {2}last: completed \(ticker-\S+\)$/m);
    const audit = await fleet.flotilla(['audit', '--schedule', 'ticker', '--json']);
    const lines = audit.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const ids = new Set(runsOf(fleet, 'ticker').map((r) => r.id));
    expect(lines.every((l) => l.schedule === 'ticker' || ids.has(String(l.agent)))).toBe(true);
    for (const id of ids) expect(lines.filter((l) => l.agent === id && l.event === 'agent_end')).toHaveLength(1);
    expect(lines.some((l) => String(l.agent).startsWith('later-'))).toBe(false);
  });

  it("an untrusted project's schedule never fires, and schedule list says why; trusted, it does", async () => {
    f = spawnFleet();
    const fleet = f;
    const untrusted = { ...fleet.env, XDG_CONFIG_HOME: join(fleet.project, 'fresh-xdg') };
    scheduled(fleet, 'stranger', 'tick');
    const add = await fleet.flotilla(
      [
        'schedule',
        'add',
        'probe',
        '*/2 * * * * *',
        '--overlap',
        'allow',
        '--catch-up',
        'none',
        '--background',
        '--model',
        `script:${script('answer.yaml')}`,
        'probe',
      ],
      untrusted,
    );
    expect(add.exitCode, add.stderr).toBe(0);
    const list = await fleet.flotilla(['schedule', 'list'], untrusted);
    expect(list.stdout).not.toMatch(/^stranger/m);
    expect(list.stderr).toContain(
      `flotilla: warning: not trusted, so never fired: schedule of ${join(fleet.layout.agentsDir, 'stranger.md')} — run 'flotilla trust' in this folder to let them run`,
    );
    const first = execa(process.execPath, [CLI, 'scheduler'], {
      cwd: fleet.project,
      env: untrusted,
      extendEnv: false,
      reject: false,
    });
    schedulers.push(first);
    await holds(() => expect(runsOf(fleet, 'probe').length).toBeGreaterThanOrEqual(3), 90_000);
    expect(runsOf(fleet, 'stranger')).toEqual([]);
    first.kill('SIGTERM');
    await first;
    trustProject(fleet.project, untrusted);
    const second = execa(process.execPath, [CLI, 'scheduler'], {
      cwd: fleet.project,
      env: untrusted,
      extendEnv: false,
      reject: false,
    });
    schedulers.push(second);
    await holds(() => expect(runsOf(fleet, 'stranger').length).toBeGreaterThanOrEqual(1), 90_000);
  });
});

describe('notify:', () => {
  it("a run's completion goes to the notified agent, whose model sees it, and not to the person; with that agent gone it comes to the person", async () => {
    f = spawnFleet({ definitions: { lead: '../schedule/notify-lead.yaml' } });
    const fleet = f;
    const lead = await fleet.spawnAgent(['--agent', 'lead', '--id', 'lead', 'wait for the nightly reports']);
    expect(lead.exitCode, lead.stderr).toBe(0);
    await holds(() => expect(fleet.record('lead').status).toBe('idle'), 60_000);
    const add = await fleet.flotilla([
      'schedule',
      'add',
      'nightly',
      '0 3 * * *',
      '--notify',
      'lead',
      '--background',
      '--model',
      `script:${script('answer.yaml')}`,
      'report the time',
    ]);
    expect(add.exitCode, add.stderr).toBe(0);
    expect((await fleet.flotilla(['schedule', 'show', 'nightly'])).stdout).toContain('; completions to lead;');
    const run = await fleet.flotilla(['schedule', 'run-now', 'nightly']);
    expect(run.exitCode, run.stderr).toBe(0);
    const runId = run.stdout.trim();
    await holds(
      () =>
        expect(fleet.record('lead').lastLine).toMatch(
          new RegExp(`^Got report: .*${runId} completed.*scheduled run done`),
        ),
      60_000,
    );
    expect(fleet.mail('human').filter((m) => m.from === runId)).toEqual([]);

    // The lead ends: the next run's completion comes to the person instead of an inbox nobody reads.
    expect((await fleet.flotilla(['cancel', 'lead'])).exitCode).toBe(0);
    await holds(() => expect(['cancelled', 'completed']).toContain(fleet.record('lead').status), 30_000);
    const again = await fleet.flotilla(['schedule', 'run-now', 'nightly']);
    expect(again.exitCode, again.stderr).toBe(0);
    const second = again.stdout.trim();
    await holds(
      () => expect(fleet.mail('human').filter((m) => m.from === second && m.kind === 'completion')).toHaveLength(1),
      60_000,
    );
  });
});
