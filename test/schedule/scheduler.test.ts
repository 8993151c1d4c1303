import { execFileSync } from 'node:child_process';
import { execa, type ResultPromise } from 'execa';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentRecord } from '../../src/fleet/record.js';
import { listRecords } from '../../src/fleet/registry.js';
import { CLI, flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { eventually } from '../helpers/tmux.js';

/** Waits until `check` stops throwing (bounded as `eventually` is). */
const holds = (check: () => unknown, ms?: number): Promise<true> =>
  eventually(async () => {
    await check();
    return true as const;
  }, ms);
const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/schedule/${name}`, import.meta.url));

let fleet: TempFleet;
let env: Record<string, string>;
const schedulers: ResultPromise[] = [];

beforeEach(() => {
  fleet = tempFleet('flotilla-schedule-');
  execFileSync('git', ['init', '-q', fleet.project]);
  const home = join(fleet.project, 'home');
  env = { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg'), FLOTILLA_ROOT: fleet.layout.root };
});
afterEach(async () => {
  for (const s of schedulers.splice(0)) s.kill('SIGKILL');
  await Promise.allSettled(schedulers);
  fleet.cleanup();
});

const cli = (args: string[]) => flotilla(args, { cwd: fleet.project, env });

function startScheduler(): ResultPromise {
  const p = execa(process.execPath, [CLI, 'scheduler'], { cwd: fleet.project, env, reject: false, all: true });
  schedulers.push(p);
  return p;
}

async function add(name: string, cron: string, extra: string[], yaml = 'answer.yaml'): Promise<void> {
  const r = await cli([
    'schedule',
    'add',
    name,
    cron,
    '--model',
    `script:${fixture(yaml)}`,
    '--background',
    ...extra,
    'report the time',
  ]);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
}

const runs = (name: string): AgentRecord[] =>
  listRecords(fleet.layout)
    .filter((r) => r.schedule?.name === name)
    .sort((a, b) => a.schedule!.slot.localeCompare(b.schedule!.slot));
const slotsOf = (rs: AgentRecord[]): number[] => rs.map((r) => Date.parse(r.schedule!.slot));
const auditLines = (): Record<string, unknown>[] =>
  readFileSync(fleet.layout.auditFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Slots are consecutive `period` apart: none fired twice, none left out between the first and last. */
function expectConsecutive(slots: number[], period: number): void {
  expect(new Set(slots).size).toBe(slots.length);
  for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBe(period);
}

describe('flotilla schedule add', () => {
  it('refuses a bad expression with the field and column, exit 2; prints the next three fires on success', async () => {
    const bad = await cli(['schedule', 'add', 'nightly', '0 25 * * *', 'review deps']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(
      /^flotilla: cron expression '0 25 \* \* \*': field 2 \(hour, column 3\) '25' is not valid; e\.g\. "0 9 \* \* 1-5"\n?$/,
    );
    const ok = await cli(['schedule', 'add', 'nightly', '0 3 * * *', '--tz', 'UTC', 'review deps', '--json']);
    expect(ok.exitCode).toBe(0);
    const out = JSON.parse(String(ok.stdout)) as { next: string[] };
    expect(out.next).toHaveLength(3);
    expect(out.next.every((t) => t.endsWith('T03:00:00.000Z'))).toBe(true);
    const list = await cli(['schedule', 'list', '--json']);
    expect(JSON.parse(String(list.stdout))).toMatchObject({
      scheduler: 'stopped',
      schedules: [{ name: 'nightly', cron: '0 3 * * *', next: out.next[0] }],
    });
  });
});

describe('the scheduler (real processes, scripted model)', () => {
  it('*/2 s: fires every slot once, each run a root agent spawned by cron with its schedule and run id', async () => {
    await add('tick', '*/2 * * * * *', ['--overlap', 'allow', '--catch-up', 'none']);
    void startScheduler();
    await holds(() => expect(runs('tick').length).toBeGreaterThanOrEqual(4), 90_000);
    const rs = runs('tick');
    expectConsecutive(slotsOf(rs), 2000);
    for (const r of rs) {
      expect(r).toMatchObject({ depth: 0, parentId: null, rootId: r.id, spawnedBy: 'cron' });
      expect(r.schedule!.runId).toBe(`r${r.schedule!.slot.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`);
    }
    await holds(() =>
      expect(
        runs('tick')
          .slice(0, 4)
          .every((r) => r.status === 'completed'),
      ).toBe(true),
    );
    const fired = auditLines().filter((l) => l.event === 'schedule_fired' && l.schedule === 'tick');
    expect(fired.every((l) => l.spawn_site === 'cron')).toBe(true);
  });

  it('overlap skip: a run that outlives its slot makes the next slots skip (audited); never two runs at once', async () => {
    await add('slow', '*/2 * * * * *', ['--catch-up', 'none'], 'slow.yaml');
    void startScheduler();
    await holds(
      () => expect(runs('slow').filter((r) => r.status === 'completed').length).toBeGreaterThanOrEqual(2),
      90_000,
    );
    const skipped = auditLines().filter((l) => l.event === 'schedule_skipped' && l.schedule === 'slow');
    expect(skipped.length).toBeGreaterThan(0);
    expect(String(skipped[0]!.reason)).toMatch(/^overlap: the last run .* has not ended$/);
    const done = runs('slow').filter((r) => r.status === 'completed');
    for (let i = 1; i < done.length; i++)
      expect(Date.parse(done[i]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(done[i - 1]!.finishedAt!));
  });

  it('overlap queue: the slot that came during a run starts once that run has ended', async () => {
    await add('queued', '*/2 * * * * *', ['--overlap', 'queue', '--catch-up', 'none'], 'slow.yaml');
    void startScheduler();
    await holds(
      () => expect(auditLines().some((l) => l.event === 'schedule_queued' && l.schedule === 'queued')).toBe(true),
      90_000,
    );
    await holds(
      () => expect(runs('queued').filter((r) => r.status === 'completed').length).toBeGreaterThanOrEqual(2),
      120_000,
    );
    const [first, second] = runs('queued');
    expect(Date.parse(second!.createdAt)).toBeGreaterThanOrEqual(Date.parse(first!.finishedAt!));
  });

  it.each([
    ['once', 1],
    ['none', 0],
  ] as const)(
    'SIGKILL mid-run and restart (catch_up %s): no slot fires twice; the missed slots fire %i time(s)',
    async (catchUp, owed) => {
      await add('kill', '*/2 * * * * *', ['--overlap', 'allow', '--catch-up', catchUp]);
      const first = startScheduler();
      await holds(() => expect(runs('kill').length).toBeGreaterThanOrEqual(2), 90_000);
      first.kill('SIGKILL');
      await first;
      const killedAt = Date.now();
      const before = new Set(slotsOf(runs('kill')));
      // Let at least two slots pass with no scheduler.
      await holds(() => expect(Date.now() - killedAt).toBeGreaterThan(4500));
      void startScheduler();
      await holds(() => expect(auditLines().filter((l) => l.event === 'scheduler_start').length).toBe(2), 60_000);
      const restartedAt = Date.parse(String(auditLines().filter((l) => l.event === 'scheduler_start')[1]!.ts));
      await holds(
        () => expect(runs('kill').some((r) => Date.parse(r.schedule!.slot) >= restartedAt)).toBe(true),
        90_000,
      );
      const slots = slotsOf(runs('kill'));
      expect(new Set(slots).size).toBe(slots.length);
      const lastBefore = Math.max(...before);
      const caughtUp = slots.filter((s) => s > lastBefore && s < restartedAt);
      expect(caughtUp.length).toBe(owed);
      // Every missed slot not caught up is audited, in one line, by the scheduler that found it.
      const missed = auditLines().filter(
        (l) => l.event === 'schedule_missed' && Date.parse(String(l.ts)) >= restartedAt,
      );
      expect(missed).toHaveLength(1);
      expect(Number(missed[0]!.count)).toBeGreaterThanOrEqual(catchUp === 'none' ? 2 : 1);
    },
  );

  it('two schedulers on one root: the second says who holds it and waits; every slot fires once, also after a handover', async () => {
    await add('pair', '*/2 * * * * *', ['--overlap', 'allow', '--catch-up', 'none']);
    const a = startScheduler();
    await holds(() => expect(runs('pair').length).toBeGreaterThanOrEqual(1), 90_000);
    const b = startScheduler();
    await holds(() => expect(readFileSync(fleet.layout.auditFile, 'utf8')).toContain('scheduler_start'));
    await holds(async () => {
      const h = await cli(['schedule', 'list', '--json']);
      expect(JSON.parse(String(h.stdout)).scheduler).toBe('running');
    });
    await holds(() => expect(runs('pair').length).toBeGreaterThanOrEqual(3), 90_000);
    a.kill('SIGTERM');
    await a;
    const handedAt = Date.now();
    await holds(() => expect(runs('pair').some((r) => Date.parse(r.schedule!.slot) > handedAt)).toBe(true), 90_000);
    b.kill('SIGTERM');
    const out = await b;
    expect(String(out.all)).toMatch(/another scheduler \(pid \d+ on .*, since .*\) holds .*; waiting for it to stop/);
    const slots = slotsOf(runs('pair'));
    expect(new Set(slots).size).toBe(slots.length);
    expect(auditLines().filter((l) => l.event === 'scheduler_start')).toHaveLength(2);
  });

  it('a holder whose socket does not answer is waited for while its process lives, and taken over once it is gone', async () => {
    await add('quiet', '0 0 1 1 *', []);
    const a = startScheduler();
    await holds(() => expect(auditLines().filter((l) => l.event === 'scheduler_start')).toHaveLength(1), 60_000);
    // The live holder's socket replaced by one nobody listens on (as a connection a loaded holder missed reads).
    rmSync(fleet.layout.schedulerSocket);
    await execa(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(fleet.layout.schedulerSocket)}, () => process.exit(0))`,
    ]);
    const b = startScheduler();
    let said = '';
    b.all!.on('data', (chunk: Buffer) => {
      said += String(chunk);
    });
    // b says who holds it and waits; no second scheduler starts beside the live one.
    await holds(
      () =>
        expect(said).toMatch(new RegExp(`another scheduler \\(pid ${a.pid} on .*\\) holds .*; waiting for it to stop`)),
      30_000,
    );
    expect(auditLines().filter((l) => l.event === 'scheduler_start')).toHaveLength(1);
    a.kill('SIGKILL');
    await a;
    await holds(() => expect(auditLines().filter((l) => l.event === 'scheduler_start')).toHaveLength(2), 60_000);
    await holds(() => expect(said).toMatch(/waiting for it to stop\n.*scheduler: watching the schedules of/), 30_000);
    b.kill('SIGTERM');
    await b;
  });

  it("a per-schedule token budget: once today's runs used it, the next slots are skipped and audited, and nothing more starts", async () => {
    await add('budget', '*/2 * * * * *', ['--overlap', 'allow', '--catch-up', 'none', '--max-tokens-per-day', '1']);
    void startScheduler();
    await holds(
      () =>
        expect(
          auditLines().some(
            (l) => l.event === 'schedule_skipped' && l.schedule === 'budget' && String(l.reason).startsWith('budget: '),
          ),
        ).toBe(true),
      90_000,
    );
    const skipped = auditLines().find((l) => l.event === 'schedule_skipped' && l.schedule === 'budget')!;
    expect(String(skipped.reason)).toMatch(/^budget: today's runs used \d+ tokens, at its max_tokens_per_day of 1$/);
    // Every run is of a slot before the first one the budget refused; none after.
    const spentAt = Date.parse(String(skipped.slot));
    await holds(
      () =>
        expect(
          auditLines().filter((l) => l.event === 'schedule_skipped' && l.schedule === 'budget').length,
        ).toBeGreaterThanOrEqual(3),
      60_000,
    );
    expect(runs('budget').filter((r) => Date.parse(r.schedule!.slot) > spentAt)).toEqual([]);
    expect(runs('budget').length).toBeGreaterThanOrEqual(1);
  });

  it('--timeout ends a run that works too long as timed_out, and the schedule shows that result', async () => {
    await add('late', '*/2 * * * * *', ['--catch-up', 'none', '--timeout', '1'], 'slow.yaml');
    void startScheduler();
    await holds(() => expect(runs('late')[0]?.status).toBe('timed_out'), 90_000);
    await holds(async () => {
      const show = await cli(['schedule', 'list', '--json']);
      // Every run works 6 s, so whichever ended last timed out.
      const last = JSON.parse(String(show.stdout)).schedules[0].lastResult as { id: string; status: string };
      expect(last.status).toBe('timed_out');
      expect(runs('late').map((r) => r.id)).toContain(last.id);
    }, 30_000);
  });
});
