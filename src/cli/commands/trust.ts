import { Command } from 'commander';
import { printJson } from '../output.js';
import type { Globals } from '../context.js';

/**
 * `flotilla trust [DIR]` (docs/security-trust.md "Folder trust"): let a project's own files — its
 * config.yaml and agent definitions — set hooks, permission modes and the rest. Only a
 * person may trust: a command an agent runs is refused, as approvals are.
 */
export function command(): Command {
  return new Command('trust')
    .description(
      "trust a project folder's own config and agent definitions (hooks, permission modes, shadowing); --list, --revoke",
    )
    .argument('[dir]', 'the project folder (default: the one here)')
    .option('--list', 'list trusted folders and whether their files changed since')
    .option('--revoke', 'stop trusting the folder')
    .option('--json', 'print the result as JSON')
    .action(
      async (dir: string | undefined, opts: { list?: boolean; revoke?: boolean; json?: boolean }, cmd: Command) => {
        const [{ resolveLayout }, store, { UsageError, refusal }] = await Promise.all([
          import('../../layout/layout.js'),
          import('../../config/trust-store.js'),
          import('../../errors.js'),
        ]);
        if (opts.list && (opts.revoke || dir !== undefined))
          throw new UsageError('--list takes no folder and no --revoke — run flotilla trust --list');
        if (opts.list) {
          const rows = store.readTrustedFolders().map((f) => {
            const layout = resolveLayout({ root: f.root, cwd: f.project, env: {} });
            return { ...f, changed: store.changedSince(layout, f) };
          });
          if (opts.json) printJson(rows);
          else if (!rows.length) process.stdout.write("no trusted folders — trust one with 'flotilla trust [DIR]'\n");
          else
            for (const r of rows)
              process.stdout.write(
                `${r.project}  trusted ${r.trustedAt}${r.changed.length ? `  (changed since: ${r.changed.join(', ')})` : ''}\n`,
              );
          return;
        }
        const { existsSync, statSync } = await import('node:fs');
        const { resolve } = await import('node:path');
        const where = resolve(dir ?? '.');
        if (!existsSync(where) || !statSync(where).isDirectory())
          throw new UsageError(`no folder at ${where} — give a project folder, e.g. flotilla trust ~/code/my-project`);
        const globals = cmd.optsWithGlobals<Globals>();
        const layout = resolveLayout({ root: globals.root, cwd: where });
        const { callerLineage } = await import('../../inbox/caller.js');
        const caller = await callerLineage(layout);
        if (caller.parent) {
          throw refusal(
            'not-a-person',
            `trust refused: only a person may trust a folder, and this command runs inside agent '${caller.parent.id}' — ask a person to run 'flotilla trust'`,
            { agent: caller.parent.id },
          );
        }
        if (opts.revoke) {
          const was = store.revokeFolder(layout);
          if (opts.json) printJson({ project: layout.project, revoked: was });
          else
            process.stdout.write(
              was ? `no longer trusted: ${layout.project}\n` : `${layout.project} was not trusted\n`,
            );
          return;
        }
        const { untrustedIgnores } = await import('../trust-prompt.js');
        const would = await untrustedIgnores(layout, process.env);
        const entry = store.trustFolder(layout);
        if (opts.json) printJson({ ...entry, allows: would });
        else {
          process.stdout.write(
            `trusted ${entry.project}${would.length ? '; its files now set:' : ' (its files set nothing that needed trust)'}\n`,
          );
          for (const item of would) process.stdout.write(`  - ${item}\n`);
        }
      },
    );
}
