import { Command, Option } from 'commander';
import type { AddOptions } from './schedule-actions.js';

/**
 * `flotilla schedule add | list | show | rm | pause | resume | run-now` (§5.10): schedules as
 * data in the fleet root, fired by `flotilla scheduler` (a window of `flotilla up`).
 */
export function command(): Command {
  const cmd = new Command('schedule').description(
    'run agents on a cron schedule: add, list, show, rm, pause, resume, run-now',
  );
  const actions = (): Promise<typeof import('./schedule-actions.js')> => import('./schedule-actions.js');

  cmd
    .command('add')
    .description('add a schedule; prints its next three fire times')
    .argument('<name>', "schedule name: letters, digits, '_' or '-'")
    .argument('<cron>', 'cron expression: 5 fields, or 6 with seconds first, e.g. "0 9 * * 1-5"')
    .argument('<task...>', 'what each run is asked to do')
    .option('--agent <definition>', 'the definition each run starts (default: agents.default)')
    .option('--model <model>', "a model for the runs (default: the definition's)")
    .option('--tz <zone>', "IANA time zone the expression is read in (default: the machine's)")
    .addOption(
      new Option('--overlap <policy>', 'a slot that comes while the last run still works')
        .choices(['skip', 'queue', 'allow'])
        .default('skip'),
    )
    .addOption(
      new Option('--catch-up <policy>', 'slots missed while no scheduler ran')
        .choices(['none', 'once'])
        .default('once'),
    )
    .option('--timeout <secs>', 'wall-clock limit of each run')
    .option('--max-cost-per-day <usd>', "no more runs today once today's runs cost this much")
    .option('--max-tokens-per-day <n>', "no more runs today once today's runs used this many tokens")
    .option('--background', 'runs open headless, not in a tmux window')
    .option('--notify <agent>', "the agent id that gets each run's completion (default: you, the human inbox)")
    .option('--json', 'print the schedule and its next fire times as JSON')
    .action(async (name: string, cron: string, task: string[], opts: AddOptions, sub: Command) =>
      (await actions()).addSchedule(sub, name, cron, task, opts),
    );

  cmd
    .command('list')
    .description('every schedule: cron, next fire, last result')
    .option('--json', 'print as JSON')
    .action(async (opts: { json?: boolean }, sub: Command) => (await actions()).listSchedulesCmd(sub, opts));
  cmd
    .command('show')
    .description("one schedule's settings, next fires and recent runs")
    .argument('<name>', 'schedule name')
    .option('--json', 'print as JSON')
    .action(async (name: string, opts: { json?: boolean }, sub: Command) =>
      (await actions()).showSchedule(sub, name, opts),
    );
  cmd
    .command('rm')
    .description('remove a schedule (its past runs stay in the registry)')
    .argument('<name>', 'schedule name')
    .action(async (name: string, _o: unknown, sub: Command) => (await actions()).removeScheduleCmd(sub, name));
  cmd
    .command('pause')
    .description('stop firing a schedule; slots that pass while paused are not caught up')
    .argument('<name>', 'schedule name')
    .action(async (name: string, _o: unknown, sub: Command) => (await actions()).pauseSchedule(sub, name));
  cmd
    .command('resume')
    .description('fire a paused schedule again from its next slot')
    .argument('<name>', 'schedule name')
    .action(async (name: string, _o: unknown, sub: Command) => (await actions()).resumeSchedule(sub, name));
  cmd
    .command('run-now')
    .description('start one run of a schedule now, outside its slots')
    .argument('<name>', 'schedule name')
    .option('--json', 'print the run as JSON')
    .action(async (name: string, opts: { json?: boolean }, sub: Command) => (await actions()).runNow(sub, name, opts));
  return cmd;
}
