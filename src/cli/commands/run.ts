import { Command, Option } from 'commander';
import { cliConfig, cliContext } from '../context.js';

export function command(): Command {
  return new Command('run')
    .description(
      'be an agent in this terminal: a REPL on a TTY, one-shot with a prompt or stdin; the answer goes to stdout',
    )
    .argument('[prompt...]', 'the task (default: stdin when it is not a TTY)')
    .option('--agent <name>', 'definition to run (default: agents.default)')
    .option('--id <id>', 'choose the agent id')
    .option('--model <spec>', 'model as provider:model-id, an alias, or script:<file.yaml>')
    .option('--prompt <text>', 'the task, instead of arguments')
    .option('--oneshot', 'exit after the task even on a TTY')
    .addOption(
      new Option('--context <mode>', "what of the parent's conversation to pass").choices([
        'none',
        'last_turn',
        'summary',
      ]),
    )
    .addOption(new Option('--spawned <id>', 'internal: run the registered agent <id> (used by spawn-agent)').hideHelp())
    .action(
      async (
        words: string[],
        opts: {
          agent?: string;
          id?: string;
          model?: string;
          prompt?: string;
          oneshot?: boolean;
          context?: 'none' | 'last_turn' | 'summary';
          spawned?: string;
        },
        cmd: Command,
      ) => {
        const { layout } = cliContext(cmd);
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
          const [{ reportError }, { closeBuses }] = await Promise.all([
            import('../output.js'),
            import('../../bus/open.js'),
          ]);
          code = reportError(err);
          await closeBuses();
        }
        // Watchers, sockets and timers must not keep a finished agent alive.
        process.exit(code);
      },
    );
}
