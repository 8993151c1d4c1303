import { Command } from 'commander';
import { cliContext } from '../context.js';

/**
 * `flotilla lease take | release | list | check` (docs/design.md §16): advisory file leases.
 * Who takes is found as `send` finds it (the agent among this process's ancestors, else
 * `human`); inside an agent's sandbox main.ts has its harness run this through its door.
 */
export function command(): Command {
  const cmd = new Command('lease').description(
    'advisory file leases: say which files you are changing, so no other agent edits them meanwhile',
  );
  cmd.addCommand(takeCommand());
  cmd.addCommand(releaseCommand());
  cmd.addCommand(listCommand());
  cmd.addCommand(checkCommand());
  return cmd;
}

function takeCommand(): Command {
  return new Command('take')
    .description('lease paths or globs (relative to this folder); exit 1 naming the holder if another has one')
    .argument('<paths...>', "files, folders or globs, e.g. src/parser.ts 'docs/**'")
    .option('--why <text>', 'what you are doing, shown to whoever is refused')
    .option('--ttl <duration>', 'keep it this long (90s, 30m, 2h), even past your task; default: until your task ends')
    .option('--wait', 'queue for paths another holds and return once they are yours')
    .option('--timeout <secs>', 'with --wait: give up after this many seconds (exit 1)')
    .option('--json', 'print JSON')
    .action(
      async (
        paths: string[],
        opts: { why?: string; ttl?: string; wait?: boolean; timeout?: string; json?: boolean },
        c: Command,
      ) => {
        const { layout } = cliContext(c);
        const [{ takeByName }, { parseTtl }, { UsageError }, by] = await Promise.all([
          import('../../team-store/leases.js'),
          import('../../leases/request.js'),
          import('../../errors.js'),
          identity(layout),
        ]);
        const timeout = opts.timeout === undefined ? undefined : Number(opts.timeout);
        if (timeout !== undefined && !(timeout >= 0))
          throw new UsageError(`--timeout must be a number of seconds ≥ 0, got '${opts.timeout}'`);
        if (timeout !== undefined && !opts.wait) throw new UsageError('--timeout goes with --wait');
        const { outcome, text } = await takeByName(layout, {
          by,
          cwd: process.cwd(),
          paths,
          why: opts.why,
          ttlMs: opts.ttl === undefined ? null : parseTtl(opts.ttl),
          wait: opts.wait,
          ...(timeout !== undefined ? { timeoutMs: timeout * 1000 } : {}),
          onQueued: (t) => process.stderr.write(`flotilla: ${t}\n`),
        });
        if (opts.json) process.stdout.write(JSON.stringify(outcome, null, 2) + '\n');
        if (outcome.ok) {
          if (!opts.json) process.stdout.write(text + '\n');
        } else {
          process.stderr.write(`flotilla: ${text}\n`);
          process.exitCode = 1;
        }
      },
    );
}

function releaseCommand(): Command {
  return new Command('release')
    .description("give leases back (yours; a person may release anyone's)")
    .argument('[paths...]', 'the leased paths as taken (default with --all: every lease of yours)')
    .option('--all', 'every lease you hold')
    .option('--json', 'print JSON')
    .action(async (paths: string[], opts: { all?: boolean; json?: boolean }, c: Command) => {
      const { layout } = cliContext(c);
      const [{ releaseByName }, { UsageError }, by] = await Promise.all([
        import('../../team-store/leases.js'),
        import('../../errors.js'),
        identity(layout),
      ]);
      if (paths.length === 0 && !opts.all)
        throw new UsageError('name the paths to release, or --all for every lease of yours');
      if (paths.length > 0 && opts.all) throw new UsageError('give paths or --all, not both');
      const text = await releaseByName(layout, by, process.cwd(), opts.all ? undefined : paths);
      process.stdout.write(opts.json ? JSON.stringify({ released: text }) + '\n' : text + '\n');
    });
}

function listCommand(): Command {
  return new Command('list')
    .description('the leases that hold now, per repository, and who waits')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }, c: Command) => {
      const { layout } = cliContext(c, { createState: false });
      const [{ listLeases }, { formatLeases }] = await Promise.all([
        import('../../team-store/leases.js'),
        import('../../leases/view.js'),
      ]);
      const views = await listLeases(layout);
      process.stdout.write(opts.json ? JSON.stringify(views, null, 2) + '\n' : formatLeases(views) + '\n');
    });
}

function checkCommand(): Command {
  return new Command('check')
    .description(
      'exit 1 naming the holder when a file you are committing is leased to someone else (a git pre-commit hook)',
    )
    .option('--staged', 'check the files staged in this checkout (git diff --cached)')
    .action(async (opts: { staged?: boolean }, c: Command) => {
      const { layout } = cliContext(c, { createState: false });
      const [{ UsageError }, { stagedConflicts }, by] = await Promise.all([
        import('../../errors.js'),
        import('../../team-store/leases.js'),
        identity(layout),
      ]);
      if (!opts.staged) throw new UsageError('say what to check: --staged (the files of the commit being made)');
      const found = await stagedConflicts(layout, by, process.cwd());
      if (found.length === 0) return;
      for (const line of found) process.stderr.write(`flotilla: ${line}\n`);
      process.exitCode = 1;
    });
}

async function identity(layout: import('../../layout/layout.js').Layout): Promise<string> {
  const { senderIdentity } = await import('../../inbox/address.js');
  return senderIdentity(layout);
}
