import type { InboxItem } from '../inbox/read.js';
import type { UnreadMail } from '../inbox/unread.js';
import type { isCompletionOf } from '../lifecycle/completion.js';
import type { RecordedMail, RecordTaken, ReturnedCompletion } from './inbox-port.js';

/**
 * Which of a harness's mail the model already has, and which is still to be claimed (§4).
 * Mail surfaced into a turn is claimed by the session once the transcript records it; mail a
 * tool handed over (check_inbox, the completions wait_for_agents returned) is recorded and
 * claimed here once the turn holding the tool result is in the transcript.
 */
export class InboxLedger {
  /** Maildir file names the model has been shown, by surfacing or through a tool. */
  readonly surfaced = new Set<string>();
  /** Handed over by a tool: claimed by `claimPending`. */
  private readonly toClaim = new Set<string>();
  // Completions the model has from wait_for_agents and that have not come in yet.
  private readonly expected: ReturnedCompletion[] = [];
  // A tool handed mail over in the turn under way: claim it when the turn is recorded, not before.
  private turnOpen = false;

  constructor(
    private readonly o: {
      /** The harness's unread mail (made after this ledger: its arrivals are checked here). */
      mail: () => UnreadMail;
      /** What the transcript being resumed already surfaced. */
      recorded: RecordedMail;
      recordTaken: RecordTaken;
      isCompletionOf: typeof isCompletionOf;
      /** Whether a message is a completion handed on to this agent (lifecycle/handed-on.ts). */
      handedOn: (message: InboxItem['message']) => boolean;
    },
  ) {}

  /**
   * A new message the model already has: one the resumed transcript recorded before a crash
   * stopped its claim (the claim is finished), or a completion wait_for_agents returned
   * (claimed with its turn), or one handed on (`readElsewhere`). True when it is not to be announced as new mail.
   */
  known(item: InboxItem): boolean {
    if (this.wasRecorded(item)) {
      this.surfaced.add(item.file);
      void this.o.mail().claim([item.file]);
      return true;
    }
    if (this.takeIfReturned(item)) {
      if (!this.turnOpen) void this.claimPending();
      return true;
    }
    return this.readElsewhere(item);
  }

  /** The unread items a look may show: neither shown yet nor read elsewhere. */
  unshown(items: InboxItem[]): InboxItem[] {
    return items.filter((i) => !this.surfaced.has(i.file) && !this.readElsewhere(i));
  }

  /**
   * A completion whose answer this agent's own command printed (spawn-agent --wait, flotilla run, …) is read:
   * claimed, never shown (docs/decisions.md "Handed on is read"). Asked at each look, not only on arrival: the
   * command may mark it after the watcher picked it up.
   */
  private readElsewhere(item: InboxItem): boolean {
    if (!this.o.handedOn(item.message)) return false;
    this.surfaced.add(item.file);
    void this.o.mail().claim([item.file]);
    return true;
  }

  /** check_inbox (without peek) gave these to the model: claimed once the turn is recorded. */
  handOver(items: InboxItem[]): void {
    this.turnOpen = true;
    for (const i of items) {
      this.surfaced.add(i.file);
      this.toClaim.add(i.file);
    }
  }

  /** wait_for_agents gave the model these completions: each is claimed as it comes, never shown as mail. */
  returned(completions: ReturnedCompletion[]): void {
    this.turnOpen = true;
    this.expected.push(...completions);
    // Bounded: one sent elsewhere (its parent is another agent) never comes here.
    if (this.expected.length > 1000) this.expected.splice(0, this.expected.length - 1000);
    for (const item of this.o.mail().items()) this.takeIfReturned(item);
  }

  /** Claims the messages (new/ → cur/) once the transcript has recorded them. */
  async claim(files: Iterable<string>): Promise<void> {
    // Fault point for the crash-safety test (§4): die after the transcript recorded, before the claim.
    if (process.env.FLOTILLA_FAULT?.split(',').includes('kill-before-claim')) process.kill(process.pid, 'SIGKILL');
    const names = [...files];
    await this.o.mail().claim(names);
    for (const n of names) this.toClaim.delete(n);
  }

  /** Mail a tool handed to the model: recorded as read through a tool, then claimed (§4). */
  async claimPending(): Promise<void> {
    this.turnOpen = false;
    if (this.toClaim.size === 0) return;
    const files = [...this.toClaim];
    const held = new Map(
      this.o
        .mail()
        .items()
        .map((i) => [i.file, i]),
    );
    const taken = files.filter((f) => held.has(f));
    if (taken.length > 0 && !this.o.recordTaken({ ids: taken.map((f) => held.get(f)!.message.id), files: taken }))
      return;
    await this.claim(files);
  }

  private wasRecorded(item: InboxItem): boolean {
    const { recorded } = this.o;
    return recorded.files.has(item.file) || (recorded.files.size === 0 && recorded.ids.has(item.message.id));
  }

  private takeIfReturned(item: InboxItem): boolean {
    const at = this.expected.findIndex((e) => this.o.isCompletionOf(item.message, e.from, e.task));
    if (at < 0) return false;
    this.expected.splice(at, 1);
    // Already shown as mail (it came before the wait returned): that surfacing claims it.
    if (this.surfaced.has(item.file)) return true;
    this.surfaced.add(item.file);
    this.toClaim.add(item.file);
    return true;
  }
}
