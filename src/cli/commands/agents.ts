import { Command } from 'commander';

/**
 * `flotilla agents list | show | create | edit | delete` (§2, §7). Only commander loads up
 * front; each action imports its module when it runs.
 */
export function command(): Command {
  const cmd = new Command('agents').description(
    'manage agent definitions (.flotilla/agents, .claude/agents, user folders)',
  );

  cmd
    .command('list')
    .description(
      'list the definitions in effect: name, scope, model, description; files that failed to load are reported',
    )
    .option('--json', 'print {definitions, errors, warnings, shadowed} as JSON')
    .option('-v, --verbose', 'print every warning, not just their count')
    .action(async (opts: { json?: boolean; verbose?: boolean }, sub: Command) => {
      const { listAgents } = await import('./agents-view.js');
      await listAgents(sub, opts);
    });

  cmd
    .command('show')
    .description('show every effective field of a definition and its prompt')
    .argument('<name>', 'definition name')
    .option('--json', 'print the definition as JSON')
    .action(async (name: string, opts: { json?: boolean }, sub: Command) => {
      const { showAgent } = await import('./agents-view.js');
      await showAgent(sub, name, opts);
    });

  cmd
    .command('create')
    .description('write a new definition file (default: the project .flotilla/agents/)')
    .argument('<name>', "definition name: 1-64 letters, digits, '_' or '-'")
    .requiredOption('--description <text>', 'what the agent does and when to use it')
    .option('--model <model>', 'model or alias, e.g. sonnet, inherit, anthropic:claude-sonnet-4-5')
    .option('--tools <list>', "comma-separated allow list, e.g. 'read, grep, glob'")
    .option('--dir <dir>', 'folder to write to (default: <fleet root>/agents)')
    .option('--json', 'print {name, path} as JSON')
    .action(
      async (
        name: string,
        opts: { description: string; model?: string; tools?: string; dir?: string; json?: boolean },
        sub: Command,
      ) => {
        const { createAgent } = await import('./agents-manage.js');
        await createAgent(sub, name, opts);
      },
    );

  cmd
    .command('edit')
    .description('open a definition in $VISUAL / $EDITOR (else vi) and keep the change only if it still loads')
    .argument('<name>', 'definition name')
    .action(async (name: string, _opts: unknown, sub: Command) => {
      const { editAgent } = await import('./agents-manage.js');
      await editAgent(sub, name);
    });

  cmd
    .command('delete')
    .description('delete a definition file (asks [y/N] unless -y)')
    .argument('<name>', 'definition name')
    .option('-y, --yes', 'do not ask')
    .action(async (name: string, opts: { yes?: boolean }, sub: Command) => {
      const { deleteAgent } = await import('./agents-manage.js');
      await deleteAgent(sub, name, opts);
    });

  return cmd;
}
