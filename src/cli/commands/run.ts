import { cliConfig, contextOf, type Globals } from '../context.js';
import { reportError } from '../../error-report.js';
import { guardStderr, guardStdout } from '../output.js';
import type { CommandSpec, Parsed } from '../spec.js';
import { cacheAtStart } from '../../start-done.js';
import { runAtExit } from '../../at-exit.js';

interface RunOpts {
  agent?: string;
  id?: string;
  model?: string;
  prompt?: string;
  oneshot?: boolean;
  context?: 'none' | 'last_turn' | 'summary';
  spawned?: string;
  shimHost?: string;
  shimHostStart?: string;
}

/**
 * `flotilla run` (§6): be one agent in this process. Every spawn starts one (`run --spawned <id>`
 * in the agent's window, which for a vendor runtime is the shim that starts its CLI), so it runs
 * on the fast path (fast.ts: its own bundle, read through V8's code cache, no commander) and
 * loads the harness only in its action (§14).
 */
export const spec: CommandSpec = {
  name: 'run',
  fast: true,
  description:
    'be an agent in this terminal: a REPL on a TTY, one-shot with a prompt or stdin; the answer goes to stdout',
  args: [{ name: '[prompt...]', description: 'the task (default: stdin when it is not a TTY)' }],
  options: [
    { flags: '--agent <name>', description: 'definition to run (default: agents.default)' },
    { flags: '--id <id>', description: 'choose the agent id' },
    { flags: '--model <spec>', description: 'model as provider:model-id, an alias, or script:<file.yaml>' },
    { flags: '--prompt <text>', description: 'the task, instead of arguments' },
    { flags: '--oneshot', description: 'exit after the task even on a TTY' },
    {
      flags: '--context <mode>',
      description: "what of the parent's conversation to pass",
      choices: ['none', 'last_turn', 'summary'],
    },
    {
      flags: '--spawned <id>',
      description: 'internal: run the registered agent <id> (used by spawn-agent)',
      hidden: true,
    },
    {
      flags: '--shim-host <socket>',
      description: "internal: be the fleet's shim host at <socket> (started by tools/shim-pane)",
      hidden: true,
    },
    {
      flags: '--shim-host-start <socket>',
      description: "internal: start the fleet's shim host at <socket> unless one answers there",
      hidden: true,
    },
  ],
};

export async function run(parsed: Parsed, globals: Globals): Promise<void> {
  // The harness lives as long as its agent: its code cache is written once the agent has started.
  cacheAtStart();
  // As the full CLI's start does (start.ts): a closed window must not stop a harness finishing its shutdown.
  guardStdout();
  guardStderr();
  const opts = parsed.opts as unknown as RunOpts;
  const words = (parsed.args[0] as string[] | undefined) ?? [];
  const { layout } = contextOf(globals);
  if (opts.shimHost || opts.shimHostStart) {
    const { ensureShimHost, runShimHost } = await import('../../shim-host/start.js');
    try {
      process.exit(
        opts.shimHost
          ? await runShimHost(layout, opts.shimHost)
          : (await ensureShimHost(layout, opts.shimHostStart!), 0),
      );
    } catch (err) {
      process.exit(reportError(err));
    }
  }
  // A person's own run asks about an untrusted folder first; a spawned harness never asks (docs/security-trust.md
  // "Folder trust").
  if (!opts.spawned) await (await import('../trust-prompt.js')).settleTrust(layout);
  const { config } = await cliConfig(layout);
  const { runHarness } = await import('../../harness/run.js');
  const prompt = opts.prompt ?? (words.length ? words.join(' ') : undefined);
  let code: number;
  try {
    code = await runHarness({
      layout,
      config,
      spawnedId: opts.spawned,
      prompt,
      agent: opts.agent,
      id: opts.id,
      model: opts.model,
      oneshot: opts.oneshot,
      context: opts.context,
      stdinIsTTY: !!process.stdin.isTTY,
      stdoutIsTTY: !!process.stdout.isTTY,
    });
  } catch (err) {
    // A start that failed half-way (refused, or its record unwritable once its inbox was
    // watched) is reported here, not left to the event loop to drain: what it opened would keep it alive.
    const { closeBuses } = await import('../../bus/open.js');
    code = reportError(err);
    await closeBuses();
  }
  // What it opened lets go (a bus flushes its last writes); watchers, sockets and timers must not keep a finished
  // agent alive.
  await runAtExit();
  process.exit(code);
}
