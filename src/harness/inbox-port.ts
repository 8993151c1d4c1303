import { mkdirSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import type { Injection } from '../loop/types.js';
import type { InboxItem } from '../inbox/read.js';
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
  ] = await Promise.all([
    import('../inbox/unread.js'),
    import('../inbox/watch-dir.js'),
    import('../inbox/surface.js'),
    import('../inbox/read.js'),
    import('../inbox/maildir.js'),
    import('../lifecycle/completion.js'),
  ]);
  const box = ensureMaildir(layout, owner);
  const surfaced = new Set<string>();
  const toClaim = new Set<string>();
  const arrivals = new Set<(notice: string) => void>();
  // Completions the model has from wait_for_agents and that have not come in yet.
  const expected: ReturnedCompletion[] = [];
  // A tool handed mail over in the turn under way: claim it when the turn is recorded, not before.
  let turnOpen = false;
  const takeIfReturned = (item: InboxItem): boolean => {
    const at = expected.findIndex((e) => isCompletionOf(item.message, e.from, e.task));
    if (at < 0) return false;
    expected.splice(at, 1);
    // Already shown as mail (it came before the wait returned): that surfacing claims it.
    if (surfaced.has(item.file)) return true;
    surfaced.add(item.file);
    toClaim.add(item.file);
    return true;
  };
  const wasRecorded = (item: InboxItem) =>
    recorded.files.has(item.file) || (recorded.files.size === 0 && recorded.ids.has(item.message.id));
  const mail = new UnreadMail(layout, owner, {
    maxBodyBytes: config.inbox.max_body_bytes,
    aliases,
    log,
    onNew: (item) => {
      if (wasRecorded(item)) {
        // The transcript recorded it before a crash stopped the claim: finish the claim, show it no more.
        surfaced.add(item.file);
        void mail.claim([item.file]);
        return;
      }
      if (takeIfReturned(item)) {
        if (!turnOpen) void claimPending();
        return;
      }
      for (const l of arrivals) l(noticeLine(item.message));
    },
  });
  const watchOpts = { poll: config.inbox.poll, pollIntervalMs: config.inbox.poll_interval_ms, log, label: owner };
  const watcher = watchDir(box.new, (name) => void (name === null ? mail.sync() : mail.note(name)), watchOpts);

  // Mail sent to a predecessor after this resume lands in its Maildir: move it here (same name, atomic).
  const forward = () => {
    for (const from of aliases) {
      const dir = join(layout.inbox(from), 'new');
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        try {
          renameSync(join(dir, name), join(box.new, name));
        } catch {
          /* claimed or moved meanwhile */
        }
      }
    }
  };
  const forwarders = aliases.map((from) => {
    const dir = join(layout.inbox(from), 'new');
    mkdirSync(dir, { recursive: true });
    return watchDir(dir, () => forward(), { ...watchOpts, label: from });
  });
  forward();
  const rescan = setInterval(() => {
    forward();
    void mail.sync();
  }, config.inbox.rescan_secs * 1000);
  rescan.unref();

  const fresh = () =>
    sortForReader(
      mail
        .items()
        .filter((i) => !surfaced.has(i.file))
        .map((i) => ({ ...i.message, item: i })),
    ).map((m) => m.item);
  const doClaim = async (files: Iterable<string>) => {
    // Fault point for the crash-safety test (§4): die after the transcript recorded, before the claim.
    if (process.env.FLOTILLA_FAULT?.split(',').includes('kill-before-claim')) process.kill(process.pid, 'SIGKILL');
    const names = [...files];
    await mail.claim(names);
    for (const n of names) toClaim.delete(n);
  };
  // Mail a tool handed to the model: recorded as read through a tool, then claimed (§4).
  const claimPending = async (): Promise<void> => {
    turnOpen = false;
    if (toClaim.size === 0) return;
    const files = [...toClaim];
    const held = new Map(mail.items().map((i) => [i.file, i]));
    const taken = files.filter((f) => held.has(f));
    if (taken.length > 0 && !recordTaken({ ids: taken.map((f) => held.get(f)!.message.id), files: taken })) return;
    await doClaim(files);
  };
  await mail.sync();

  return {
    async take(): Promise<Injection | undefined> {
      await mail.sync();
      const items = fresh();
      if (items.length === 0) return undefined;
      for (const i of items) surfaced.add(i.file);
      return {
        source: 'inbox',
        text: formatForModel(items.map((i) => i.message)),
        ids: items.map((i) => i.message.id),
        files: items.map((i) => i.file),
      };
    },
    async hasUnread(): Promise<boolean> {
      forward();
      await mail.sync();
      return mail.items().some((i) => !surfaced.has(i.file));
    },
    claim: doClaim,
    /** check_inbox: unread mail as text; without peek it is claimed once the turn is recorded. */
    async takeForTool(peek: boolean): Promise<string> {
      if (!peek) await mail.sync();
      const items = peek ? (await list(layout, owner, { log, aliases })).filter((i) => !i.read) : fresh();
      if (items.length === 0) return 'No unread messages.';
      if (!peek) {
        turnOpen = true;
        for (const i of items) {
          surfaced.add(i.file);
          toClaim.add(i.file);
        }
      }
      return formatForModel(items.map((i) => i.message));
    },
    claimPending,
    returned(completions: ReturnedCompletion[]): void {
      turnOpen = true;
      expected.push(...completions);
      // Bounded: one sent elsewhere (its parent is another agent) never comes here.
      if (expected.length > 1000) expected.splice(0, expected.length - 1000);
      for (const item of mail.items()) takeIfReturned(item);
      void mail.sync();
    },
    onArrival(listener) {
      arrivals.add(listener);
    },
    async close() {
      clearInterval(rescan);
      watcher.close();
      for (const f of forwarders) f.close();
    },
  };
}
