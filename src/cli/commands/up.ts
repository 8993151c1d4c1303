import { Command, Option } from 'commander';
import { cliConfig, cliContext } from '../context.js';
import { printJson } from '../output.js';

/** `flotilla up` (§2): open or re-attach the fleet's tmux session; `npm start` runs it. */
export function command(): Command {
  return new Command('up')
    .description(
      "open (or re-attach) the fleet's tmux session: a dashboard window and a root agent window; with no model configured the root runs the offline demo",
    )
    .option('--detach', 'do not attach; print how to')
    .option('--model <spec>', "the root agent's model (provider:model-id, an alias, or script:<file.yaml>)")
    .option('--agent <name>', 'definition the root agent runs (default: agents.default)')
    .option('--prompt <text>', 'a first task for the root agent')
    .addOption(
      new Option(
        '--runtime <name>',
        "what runs the root agent: Flotilla's harness, or Claude Code / Codex / Gemini CLI under a Flotilla shim",
      ).choices(['flotilla', 'claude', 'codex', 'gemini']),
    )
    .option('--json', 'print what was opened as JSON (implies --detach)')
    .action(
      async (
        opts: {
          detach?: boolean;
          model?: string;
          agent?: string;
          prompt?: string;
          runtime?: 'flotilla' | 'claude' | 'codex' | 'gemini';
          json?: boolean;
        },
        cmd: Command,
      ) => {
        const { layout } = cliContext(cmd);
        // Asked before the config is read: a yes changes what it says (docs/security-trust.md "Folder trust").
        await (await import('../trust-prompt.js')).settleTrust(layout);
        const { config } = await cliConfig(layout);
        // Said once, before anything opens (docs/security.md "The default: auto").
        const warning = (await import('../../tools/sandbox-mode.js')).sandboxWarning(config);
        if (warning) process.stderr.write(`${warning}\n`);
        const { fleetUp, attachFleet } = await import('../../up/up.js');
        const onWait = (): void =>
          void process.stderr.write(
            "flotilla: another 'flotilla up' is opening this fleet — waiting for it, then using its session\n",
          );
        const result = await fleetUp({
          layout,
          config,
          model: opts.model,
          agent: opts.agent,
          prompt: opts.prompt,
          runtime: opts.runtime,
          onWait,
        });
        if (opts.json) {
          printJson(result);
          return;
        }
        const what = result.created ? 'opened' : 'found';
        const root = result.root.created ? `root agent ${result.root.id}` : 'its root window';
        const demo = result.demo
          ? ' — no model configured, so the root runs the offline demo on the scripted model'
          : '';
        process.stderr.write(`flotilla: ${what} session ${result.session} with the dashboard and ${root}${demo}\n`);
        for (const path of result.demo?.removed ?? [])
          process.stderr.write(
            `flotilla: removed ${path}, a demo definition an older version installed (the demo's are built in now)\n`,
          );
        if (opts.detach) {
          process.stdout.write(`attach with: ${result.attachCommand}\n`);
          return;
        }
        const how = await attachFleet(result);
        if (how === 'elsewhere')
          process.stdout.write(
            `the fleet runs on another tmux server; attach from a shell outside tmux with: ${result.attachCommand}\n`,
          );
      },
    );
}
