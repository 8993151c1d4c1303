import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import type { Injection } from '../loop/types.js';
import type { InboxItem } from '../inbox/read.js';
import type { InboxPort } from './session.js';

/**
 * The harness's side of its Maildir (§4): a watcher fills `unread`; `take()` hands the
 * not-yet-surfaced messages to the loop as one injection; `claim()` renames them into cur/
 * only after the transcript has recorded them, so a crash in between re-delivers.
 */
export async function openInboxPort(layout: Layout, owner: string, config: Config, log: Log, alreadySurfaced: ReadonlySet<string> = new Set(), aliases: readonly string[] = []): Promise<InboxPort & { takeForTool(peek: boolean): Promise<string>; claimPending(): Promise<void> }> {
  const [{ watchInbox }, { formatForModel, noticeLine, sortForReader }, { claim }, { list }] = await Promise.all([
    import('../inbox/watch.js'), import('../inbox/surface.js'), import('../inbox/claim.js'), import('../inbox/read.js'),
  ]);
  const unread = new Map<string, InboxItem>();
  const surfaced = new Set<string>();
  const toClaim = new Set<string>();
  const arrivals = new Set<(notice: string) => void>();
  const watcher = watchInbox(layout, owner, {
    poll: config.inbox.poll, pollIntervalMs: config.inbox.poll_interval_ms, rescanSecs: config.inbox.rescan_secs,
    maxBodyBytes: config.inbox.max_body_bytes, log, aliases,
  });
  // Keyed by message id: the ids the transcript records (§8) and resume compares against.
  watcher.on('message', (item) => {
    if (unread.has(item.message.id)) return;
    if (alreadySurfaced.has(item.message.id)) {
      // The transcript recorded it before a crash stopped the claim: finish the claim, show it no more.
      void claim(layout, owner, item).catch((err: unknown) => log.error({ err: String(err), file: item.file }, 'claim failed'));
      return;
    }
    unread.set(item.message.id, item);
    for (const l of arrivals) l(noticeLine(item.message));
  });
  await watcher.ready;

  const fresh = () => sortForReader([...unread.values()].filter((i) => !surfaced.has(i.message.id)).map((i) => ({ ...i.message, item: i }))).map((m) => m.item);
  const doClaim = async (ids: Iterable<string>) => {
    // Fault point for the crash-safety test (§4): die after the transcript recorded, before the claim.
    if (process.env.FLOTILLA_FAULT === 'kill-before-claim') process.kill(process.pid, 'SIGKILL');
    for (const id of ids) {
      const item = unread.get(id);
      if (item) await claim(layout, owner, item).catch((err: unknown) => log.error({ err: String(err), id }, 'claim failed'));
      unread.delete(id);
      toClaim.delete(id);
    }
  };

  return {
    async take(): Promise<Injection | undefined> {
      const items = fresh();
      if (items.length === 0) return undefined;
      for (const i of items) surfaced.add(i.message.id);
      return { source: 'inbox', text: formatForModel(items.map((i) => i.message)), ids: items.map((i) => i.message.id) };
    },
    claim: doClaim,
    /** check_inbox: unread mail as text; without peek it is claimed once the turn is recorded. */
    async takeForTool(peek: boolean): Promise<string> {
      const items = peek ? (await list(layout, owner, { log, aliases })).filter((i) => !i.read) : fresh();
      if (items.length === 0) return 'No unread messages.';
      if (!peek) for (const i of items) { surfaced.add(i.message.id); toClaim.add(i.message.id); }
      return formatForModel(items.map((i) => i.message));
    },
    claimPending: () => doClaim([...toClaim]),
    onArrival(listener) { arrivals.add(listener); },
    close: () => watcher.close(),
  };
}
