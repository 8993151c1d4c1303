import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import type { Injection } from '../loop/types.js';
import { moveUnread } from '../inbox/adopt.js';
import type { InboxMessage } from '../inbox/message.js';
import type { DirWatcher } from '../inbox/watch-dir.js';
import { InboxLedger } from './inbox-ledger.js';
import type { InboxPort } from './session-deps.js';

/** A completion the model already has from a tool (wait_for_agents): claimed when it comes, never shown as mail. */
export interface ReturnedCompletion {
  from: string;
  task: number;
}

/** Records mail a tool handed to the model (transcript `surfaced`, via tool); false when it could not be written. */
export type RecordTaken = (taken: { ids: string[]; files: string[] }) => boolean;

/** What the transcript being resumed already surfaced: by file name, or by id for older transcripts. */
export interface RecordedMail {
  files: ReadonlySet<string>;
  ids: ReadonlySet<string>;
}

/** The inbox port with what the harness's tools add: check_inbox's reads and wait_for_agents' completions. */
export type HarnessInboxPort = InboxPort & {
  takeForTool(peek: boolean): Promise<string>;
  claimPending(): Promise<void>;
  returned(completions: ReturnedCompletion[]): void;
};

/**
 * The harness's side of its Maildir (§4). Unread mail is state, not events: every `take()`
 * and `hasUnread()` re-reads new/ (one readdir) and compares it with what this agent has
 * claimed, so mail is surfaced even when no event came; `fs.watch` only makes it sooner.
 * `claim()` renames into cur/ only after the transcript has recorded them, so a crash in
 * between re-delivers. Mail to the agents this one continues (resume) is forwarded here.
 *
 * Mail a tool handed to the model — check_inbox's, and the completions wait_for_agents
 * returned — is recorded (`recordTaken`) and claimed once the turn holding the tool result
 * is in the transcript (`claimPending`). A returned completion that arrives later (the
 * child's record says "done" a moment before its completion is delivered) is claimed when
 * it comes; it is never shown again as mail.
 */
export async function openInboxPort(
  layout: Layout,
  owner: string,
  config: Config,
  log: Log,
  recorded: RecordedMail = { files: new Set(), ids: new Set() },
  aliases: readonly string[] = [],
  recordTaken: RecordTaken = () => true,
): Promise<HarnessInboxPort> {
  const [
    { UnreadMail },
    { watchDir },
    { formatForModel, noticeLine, sortForReader },
    { list },
    { ensureMaildir },
    { isCompletionOf },
    { handedOn },
  ] = await Promise.all([
    import('../inbox/unread.js'),
    import('../inbox/watch-dir.js'),
    import('../inbox/surface.js'),
    import('../inbox/read.js'),
    import('../inbox/maildir.js'),
    import('../lifecycle/completion.js'),
    import('../lifecycle/handed-on.js'),
  ]);
  const box = ensureMaildir(layout, owner);
  const arrivals = new Set<(notice: string) => void>();
  // Completions whose answers its own commands printed: read, never shown (docs/decisions.md "Handed on is read").
  const read = (message: InboxMessage) => handedOn(layout, message);
  const ledger = new InboxLedger({ mail: () => mail, recorded, recordTaken, isCompletionOf, handedOn: read });
  const mail = new UnreadMail(layout, owner, {
    maxBodyBytes: config.inbox.max_body_bytes,
    aliases,
    log,
    onNew: (item) => {
      if (ledger.known(item)) return;
      for (const l of arrivals) l(noticeLine(item.message));
    },
  });
  const watchOpts = { poll: config.inbox.poll, pollIntervalMs: config.inbox.poll_interval_ms, log, label: owner };
  const watcher = watchDir(box.new, (name) => void (name === null ? mail.sync() : mail.note(name)), watchOpts);
  const predecessors = forwardPredecessorMail(layout, aliases, box.new, (dir, onChange, label) =>
    watchDir(dir, onChange, { ...watchOpts, label }),
  );
  const rescan = setInterval(() => {
    predecessors.forward();
    void mail.sync();
  }, config.inbox.rescan_secs * 1000);
  rescan.unref();

  const fresh = () =>
    sortForReader(ledger.unshown(mail.items()).map((i) => ({ ...i.message, item: i }))).map((m) => m.item);
  await mail.sync();

  return {
    async take(): Promise<Injection | undefined> {
      await mail.sync();
      const items = fresh();
      if (items.length === 0) return undefined;
      for (const i of items) ledger.surfaced.add(i.file);
      return {
        source: 'inbox',
        text: formatForModel(items.map((i) => i.message)),
        ids: items.map((i) => i.message.id),
        files: items.map((i) => i.file),
      };
    },
    async hasUnread(): Promise<boolean> {
      predecessors.forward();
      await mail.sync();
      return fresh().length > 0;
    },
    claim: (files) => ledger.claim(files),
    /** check_inbox: unread mail as text; without peek it is claimed once the turn is recorded. */
    async takeForTool(peek: boolean): Promise<string> {
      if (!peek) await mail.sync();
      const items = peek
        ? (await list(layout, owner, { log, aliases })).filter((i) => !i.read && !read(i.message))
        : fresh();
      if (items.length === 0) return 'No unread messages.';
      if (!peek) ledger.handOver(items);
      return formatForModel(items.map((i) => i.message));
    },
    claimPending: () => ledger.claimPending(),
    returned(completions: ReturnedCompletion[]): void {
      ledger.returned(completions);
      void mail.sync();
    },
    onArrival(listener) {
      arrivals.add(listener);
    },
    async close() {
      clearInterval(rescan);
      watcher.close();
      predecessors.close();
    },
  };
}

/**
 * Mail sent to a predecessor after this resume lands in its Maildir: moved here (same name,
 * atomic) at once, whenever its new/ changes, and on each `forward()`.
 */
function forwardPredecessorMail(
  layout: Layout,
  aliases: readonly string[],
  into: string,
  watch: (dir: string, onChange: () => void, label: string) => DirWatcher,
): { forward: () => void; close: () => void } {
  const forward = () => {
    for (const from of aliases) moveUnread(layout, from, into);
  };
  const forwarders = aliases.map((from) => {
    const dir = join(layout.inbox(from), 'new');
    mkdirSync(dir, { recursive: true });
    return watch(dir, () => forward(), from);
  });
  forward();
  return {
    forward,
    close: () => {
      for (const f of forwarders) f.close();
    },
  };
}
