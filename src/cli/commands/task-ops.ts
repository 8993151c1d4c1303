import { contextOf, type Globals } from '../context.js';
import { writeOut } from '../output.js';
import type { CommandSpec, OptionSpec, Parsed } from '../spec.js';

/**
 * `flotilla task add | list | show | claim | release | done | fail | cancel | wait`
 * (docs/design.md §15). Agents call these as often as `send`, so they run on the fast path
 * (fast/task.ts: one spec per subcommand, no commander); the full CLI (task.ts) builds the
 * same subcommands from the same specs for help and usage errors. The board code loads
 * inside each action.
 */

const BOARD: OptionSpec = {
  flags: '--board <name>',
  description: "the board (default: $FLOTILLA_BOARD, else the fleet's board 'fleet')",
};
const JSON_OPT: OptionSpec = { flags: '--json', description: 'print JSON' };

/** A subcommand acting on one task, with free text after its id (a result, a reason, a note). */
function onTask(name: string, description: string, text: string, textDescription: string): CommandSpec {
  return {
    name,
    description,
    args: [
      { name: '<id>', description: 'task id' },
      { name: `[${text}...]`, description: textDescription },
    ],
    options: [BOARD, JSON_OPT],
  };
}

export const SUBCOMMANDS: Record<string, CommandSpec> = {
  add: {
    name: 'add',
    description: 'add a task to a board; prints its id',
    args: [{ name: '<title>', description: 'one line saying what to do' }],
    options: [
      { flags: '--body <text>', description: 'the details' },
      {
        flags: '--priority <level>',
        description: 'priority',
        choices: ['urgent', 'high', 'normal', 'low'],
        default: 'normal',
      },
      { flags: '--labels <list>', description: 'comma-separated labels' },
      {
        flags: '--blocked-by <ids>',
        description: 'comma-separated task ids that must be done first (may name tasks added later)',
      },
      { flags: '--id <id>', description: 'a chosen id (default t<n>)' },
      BOARD,
      JSON_OPT,
    ],
  },
  list: {
    name: 'list',
    description: 'the unfinished tasks in claim order, the last to finish, and the counts',
    args: [],
    options: [{ flags: '--all', description: 'every task, finished ones included' }, BOARD, JSON_OPT],
  },
  show: {
    name: 'show',
    description: 'one task in full',
    args: [{ name: '<id>', description: 'task id' }],
    options: [BOARD, JSON_OPT],
  },
  claim: {
    name: 'claim',
    description: 'claim a task (exactly one claimant wins); exit 1 naming the holder if taken',
    args: [{ name: '[id]', description: 'task id (or --next)' }],
    options: [
      { flags: '--next', description: 'the first claimable task by priority, then age (exit 1 if none)' },
      BOARD,
      JSON_OPT,
    ],
  },
  release: onTask('release', 'give a claimed task back (open again)', 'why', 'a note for whoever takes it next'),
  done: onTask(
    'done',
    'mark a task done with its result (its claimant or a person)',
    'result',
    'the result (default: stdin when piped)',
  ),
  fail: onTask('fail', 'mark a task failed with the reason (its claimant or a person)', 'reason', 'why'),
  cancel: onTask('cancel', 'cancel a task (its creator or a person); its dependents may go ahead', 'reason', 'why'),
  wait: {
    name: 'wait',
    description: 'block until the board has drained; exit 0 only if every task is done or cancelled',
    args: [],
    options: [{ flags: '--timeout <secs>', description: 'give up after this many seconds (exit 1)' }, BOARD, JSON_OPT],
  },
};

type Opts = Record<string, string | boolean | undefined>;

function boardName(opts: Opts): string {
  const given = typeof opts.board === 'string' ? opts.board : process.env.FLOTILLA_BOARD;
  return given?.trim() || 'fleet';
}

const list = (v: unknown): string[] =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
const words = (v: unknown): string => (Array.isArray(v) ? v.join(' ') : '');

export async function runSub(sub: string, parsed: Parsed, globals: Globals): Promise<void> {
  const opts = parsed.opts;
  const board = boardName(opts);
  const looks = sub === 'list' || sub === 'show' || sub === 'wait';
  // A command that only looks never creates a fleet root (an empty board reads as empty).
  const { layout } = contextOf(globals, { createState: !looks });
  if (looks) return read(sub, parsed, layout, board);
  // Inside a sandbox the board is read-only: main.ts has the agent's harness run this through its door.
  const [ops, { UsageError, FlotillaError }] = await Promise.all([
    import('../../team-store/board.js'),
    import('../../errors.js'),
  ]);
  const by = await identity(layout);
  const id = parsed.args[0] as string | undefined;
  let task;
  switch (sub) {
    case 'add': {
      const { checkPriority } = await import('../../tasks/task.js');
      task = await ops.addTask(
        layout,
        board,
        {
          title: id ?? '',
          ...(typeof opts.body === 'string' ? { body: opts.body } : {}),
          priority: checkPriority(String(opts.priority ?? 'normal')),
          labels: list(opts.labels),
          blockedBy: list(opts.blockedBy),
          ...(typeof opts.id === 'string' ? { id: opts.id } : {}),
        },
        by,
      );
      break;
    }
    case 'claim':
      if (opts.next && id) throw new UsageError('give a task id or --next, not both');
      if (opts.next) {
        task = await ops.claimNext(layout, board, by);
        if (!task)
          throw new FlotillaError(
            `no claimable task on board '${board}' — 'flotilla task list --board ${board}' shows what is open and what it waits on`,
            { code: 'no-task' },
          );
      } else if (id) {
        task = await ops.claimTask(layout, board, id, by);
      } else {
        throw new UsageError(
          'name the task to claim, or --next for the first claimable one, e.g. flotilla task claim --next',
        );
      }
      break;
    case 'release':
      task = await ops.releaseTask(layout, board, id!, by, words(parsed.args[1]) || undefined);
      break;
    case 'done': {
      const result = words(parsed.args[1]) || (await stdinText());
      task = await ops.finishTask(layout, board, id!, by, 'done', result);
      break;
    }
    case 'fail':
    case 'cancel':
      task = await ops.finishTask(
        layout,
        board,
        id!,
        by,
        sub === 'fail' ? 'failed' : 'cancelled',
        words(parsed.args[1]),
      );
      break;
    default:
      throw new UsageError(`unknown task command '${sub}' — run 'flotilla task --help'`);
  }
  writeOut(
    opts.json
      ? JSON.stringify(task, null, 2) + '\n'
      : sub === 'add' || sub === 'claim'
        ? `${task.id}\n`
        : `${task.id} ${task.status}\n`,
  );
}

async function read(
  sub: string,
  parsed: Parsed,
  layout: import('../../layout/layout.js').Layout,
  board: string,
): Promise<void> {
  const opts = parsed.opts;
  if (sub === 'list') {
    const [{ listBoard }, { formatListing }] = await Promise.all([
      import('../../team-store/board.js'),
      import('../../tasks/view.js'),
    ]);
    const l = await listBoard(layout, board, { all: opts.all === true });
    writeOut(opts.json ? JSON.stringify(l, null, 2) + '\n' : formatListing(l) + '\n');
    return;
  }
  if (sub === 'show') {
    const [{ showTask }, { formatTask }, { FlotillaError }] = await Promise.all([
      import('../../team-store/board.js'),
      import('../../tasks/view.js'),
      import('../../errors.js'),
    ]);
    // A claim whose claimant is gone shows open, as the next writer will leave it.
    const task = await showTask(layout, board, parsed.args[0] as string);
    if (!task)
      throw new FlotillaError(
        `no task '${String(parsed.args[0])}' on board '${board}' — run 'flotilla task list --board ${board}'`,
        { code: 'not-found' },
      );
    writeOut(opts.json ? JSON.stringify(task, null, 2) + '\n' : formatTask(task) + '\n');
    return;
  }
  const [{ waitForBoard }, { countsLine }, { UsageError }] = await Promise.all([
    import('../../team-store/board.js'),
    import('../../tasks/view.js'),
    import('../../errors.js'),
  ]);
  const timeout = opts.timeout === undefined ? undefined : Number(opts.timeout);
  if (timeout !== undefined && !(timeout >= 0))
    throw new UsageError(`--timeout must be a number of seconds ≥ 0, got '${String(opts.timeout)}'`);
  const out = await waitForBoard(layout, board, timeout === undefined ? {} : { timeoutMs: timeout * 1000 });
  if (opts.json) writeOut(JSON.stringify({ board, ...out }, null, 2) + '\n');
  else {
    writeOut(countsLine(board, out.counts) + '\n');
    if (!out.drained)
      process.stderr.write(`flotilla: board '${board}' still has work after ${String(opts.timeout)} s\n`);
    else if (out.stuck.length > 0)
      process.stderr.write(
        `flotilla: ${out.stuck.join(', ')} can never be claimed: each waits on a task that failed or does not exist\n`,
      );
  }
  const ok = out.drained && out.stuck.length === 0 && out.counts.failed === 0;
  process.exitCode = ok ? 0 : 1;
}

/** Who is acting, as for `send` (§4): the agent among this process's ancestors, else `human`. */
async function identity(layout: import('../../layout/layout.js').Layout): Promise<string> {
  const { senderIdentity } = await import('../../inbox/address.js');
  return senderIdentity(layout);
}

async function stdinText(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8').trim();
}
