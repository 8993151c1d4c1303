import { Command } from 'commander';
import { cliConfig, cliContext } from '../context.js';

/** `flotilla status` / `ls` (§2): the agent tree; dead harnesses are reaped first. */
export function command(): Command {
  return new Command('status')
    .alias('ls')
    .description('the agent tree with state, depth, turns, tokens, cost, elapsed, unread mail and last line')
    .option('--json', 'print an array of registry records, each with its unread count')
    .option('--all', 'list every finished agent, not only the 100 that ended last')
    .action(async (opts: { json?: boolean; all?: boolean }, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const { config } = await cliConfig(layout);
      const [{ reconcileDead }, { listRecords }, { liveRecords, recentRecords }, { unreadCount }, { formatStatus }] = await Promise.all([
        import('../../lifecycle/reconcile.js'), import('../../fleet/registry.js'), import('../../fleet/live.js'), import('../../inbox/maildir.js'), import('../../spawn/status-view.js'),
      ]);
      // Each record is read once: the live ones, reaped if dead, then the window of finished ones.
      // A damaged record hides nothing else; it is listed with what to do about it.
      const corrupt = new Map<string, string>();
      const onCorrupt = (c: { id: string; error: string }) => corrupt.set(c.id, c.error);
      const live = liveRecords(layout, undefined, onCorrupt);
      const reaped = new Map((await reconcileDead(layout, config, { records: live })).map((r) => [r.id, r]));
      const { records, hidden } = opts.all
        ? { records: listRecords(layout, onCorrupt), hidden: 0 }
        : recentRecords(layout, undefined, undefined, live.map((r) => reaped.get(r.id) ?? r));
      const entries = records.map((record) => ({ record, unread: unreadCount(layout, record.id) }));
      if (opts.json) {
        const bad = [...corrupt].map(([id, error]) => ({ id, status: 'corrupt', error }));
        process.stdout.write(JSON.stringify([...entries.map((e) => ({ ...e.record, unread: e.unread })), ...bad], null, 2) + '\n');
        return;
      }
      const width = process.stdout.isTTY ? process.stdout.columns : undefined;
      process.stdout.write(formatStatus(entries, width ? { width } : {}) + '\n');
      for (const [id, error] of corrupt) process.stdout.write(`${id}  corrupt  ${error}\n`);
      if (hidden > 0) process.stdout.write(`… ${hidden.toLocaleString('en')} finished — flotilla status --all\n`);
      const human = unreadCount(layout, 'human');
      if (human) process.stdout.write(`\n${human} unread message${human === 1 ? '' : 's'} for you — flotilla inbox\n`);
    });
}
