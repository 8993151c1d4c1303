import { Command } from 'commander';
import type { Log } from '../../audit/logger.js';
import type { InboxItem } from '../../inbox/read.js';
import { FlotillaError } from '../../errors.js';
import { cliConfig, cliContext } from '../context.js';
import { printJson } from '../output.js';

interface InboxOpts {
  read?: string;
  peek?: boolean;
  json?: boolean;
  all?: boolean;
}

/** Files that are not messages are moved aside by the reader; a person hears about it on stderr. */
const stderrLog: Log = {
  debug() {},
  info() {},
  warn(_obj, msg) {
    process.stderr.write(`flotilla: warning: ${msg ?? 'inbox problem'}\n`);
  },
  error(_obj, msg) {
    process.stderr.write(`flotilla: ${msg ?? 'inbox error'}\n`);
  },
};

/** `flotilla inbox [id]` (§2, §4): list or read the human inbox, or an agent's. */
export function command(): Command {
  return new Command('inbox')
    .description("list or read messages: the human inbox by default, or an agent's by id prefix")
    .argument('[id]', "whose inbox: an agent id or prefix, or 'human' (default)")
    .option('--read <message-id>', 'show one message (id prefix) and mark it read (claim it)')
    .option('--peek', 'show without marking read: with --read, that message; alone, every unread message in full')
    .option('--all', 'include read messages (cur/)')
    .option('--json', 'print JSON')
    .action(async (who: string | undefined, opts: InboxOpts, cmd: Command) => {
      const { layout } = cliContext(cmd);
      const [
        { resolveRecipient, senderIdentity },
        read,
        { claim },
        { compareForReader },
        { headerOf },
        { inboxSettings },
        { UsageError },
      ] = await Promise.all([
        import('../../inbox/address.js'),
        import('../../inbox/read.js'),
        import('../../inbox/claim.js'),
        import('../../inbox/surface.js'),
        import('../../inbox/message.js'),
        import('../../inbox/settings.js'),
        import('../../errors.js'),
      ]);
      const me = senderIdentity(layout);
      const owner = who ? inboxOwner(() => resolveRecipient(layout, who, me), who) : 'human';
      const readOpts = { log: stderrLog, maxBodyBytes: (await inboxSettings(layout)).max_body_bytes };
      // On a bus, mail for an owner nobody's harness feeds (the person, an ended agent) waits
      // there until someone looks (§18): bring it into the spool first, as status does.
      const { config } = await cliConfig(layout);
      if (config.fleet.bus !== 'maildir')
        await (await import('../../bus/open.js')).busFor(layout, config).mail.collect([owner]);

      if (opts.read !== undefined) {
        const item = await read.peek(layout, owner, opts.read, readOpts);
        let claimed = false;
        if (!opts.peek && !item.read) {
          // Claiming takes the message from its owner: only the owner may do it (§4 claim).
          if (owner !== me) {
            throw new UsageError(
              `'${item.message.id}' is in the inbox of '${owner}', not yours ('${me}'); reading it would take it from them — add --peek to look without claiming`,
            );
          }
          claimed = (await claim(layout, owner, item)).status === 'claimed';
        }
        if (opts.json)
          printJson({ ...headerOf(item.message), body: item.message.body, read: item.read || claimed, claimed });
        else process.stdout.write(formatFull(item) + '\n');
        return;
      }

      const items = await read.list(layout, owner, { ...readOpts, includeRead: opts.all === true });
      const unread = items.filter((i) => !i.read).sort((a, b) => compareForReader(a.message, b.message));
      const shown = [...unread, ...items.filter((i) => i.read)];
      if (opts.json) {
        const now = Date.now();
        printJson(
          shown.map((i) => ({
            ...headerOf(i.message),
            read: i.read,
            age_secs: Math.max(0, Math.round((now - Date.parse(i.message.timestamp)) / 1000)),
            file: i.file,
          })),
        );
        return;
      }
      if (opts.peek) {
        process.stdout.write(shown.map(formatFull).join('\n\n') + (shown.length ? '\n' : ''));
        return;
      }
      if (shown.length === 0) {
        process.stdout.write(`no ${opts.all ? '' : 'unread '}messages for ${owner}\n`);
        return;
      }
      const { formatElapsedMs } = await import('../../fleet/status-view.js');
      process.stdout.write(table(shown, formatElapsedMs) + '\n');
    });
}

/** Reading is not sending: an unknown id says how to find one, not whom to send to instead. */
function inboxOwner(resolve: () => string, who: string): string {
  try {
    return resolve();
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'unknown-recipient') throw err;
    throw new FlotillaError(
      `no agent id starts with '${who.trim()}' — run 'flotilla status' to list agents, or leave the id out to read the human inbox`,
      { code: 'not-found' },
    );
  }
}

function formatFull(item: InboxItem): string {
  const m = item.message;
  const { body: _b, ...header } = m;
  const lines = Object.entries(header).map(
    ([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`,
  );
  lines.push(`state: ${item.read ? 'read' : 'unread'}`);
  return `${lines.join('\n')}\n\n${m.body.replace(/\s+$/, '')}`;
}

function table(items: InboxItem[], age: (ms: number) => string): string {
  const now = Date.now();
  const rows = items.map((i) => [
    i.message.id,
    i.message.from,
    i.message.kind,
    i.message.priority,
    age(now - Date.parse(i.message.timestamp)),
    i.read ? 'read' : 'unread',
    i.message.summary,
  ]);
  const head = ['ID', 'FROM', 'KIND', 'PRIORITY', 'AGE', 'STATE', 'SUMMARY'];
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const fmt = (r: string[]) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ');
  return [fmt(head), ...rows.map(fmt)].join('\n');
}
