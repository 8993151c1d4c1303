import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { audit } from '../audit/audit.js';
import { nullLog, type Log } from '../audit/logger.js';
import { errorMessage } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { claim } from './claim.js';
import { isCandidate, maildir } from './maildir.js';
import { readItem, type InboxItem } from './read.js';

/**
 * One reader's unread mail (§4), keyed by Maildir file name — unique by the Maildir rules —
 * never by the `id` inside, which a careless sender can repeat. What is in new/ and not yet
 * claimed by this reader is unread; `sync()` compares new/ (one readdir) against that, so a
 * message no event reported is found by the next sync, whatever was "seen" before.
 */
export interface UnreadOptions {
  maxBodyBytes?: number;
  /** Addresses accepted besides the owner (a resumed agent's predecessors). */
  aliases?: readonly string[];
  log?: Log;
  /** Called once per newly found message. */
  onNew?: (item: InboxItem) => void;
}

/** Files read or claimed at once: enough to hide each file operation's latency, few enough for any fd limit. */
const BATCH = 32;

export class UnreadMail {
  private readonly held = new Map<string, InboxItem>();
  private readonly reading = new Map<string, Promise<void>>();
  private readonly ids = new Map<string, string>();
  private readonly dir: string;
  private syncing: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly layout: Layout,
    private readonly owner: string,
    private readonly opts: UnreadOptions = {},
  ) {
    this.dir = maildir(layout, owner).new;
  }

  private get log(): Log {
    return this.opts.log ?? nullLog;
  }

  /** Unread messages held now, in no particular order. */
  items(): InboxItem[] {
    return [...this.held.values()];
  }

  get size(): number {
    return this.held.size;
  }

  /** Reads one name (an event's hint) unless it is already held. */
  note(name: string): Promise<void> {
    if (!isCandidate(name) || this.held.has(name)) return Promise.resolve();
    const pending = this.reading.get(name);
    if (pending) return pending;
    const p = this.read(name).finally(() => this.reading.delete(name));
    this.reading.set(name, p);
    return p;
  }

  /** One readdir of new/: reads every name not held; forgets held names another hand took away. Coalesced. */
  sync(): Promise<void> {
    if (this.syncing) {
      this.again = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      do {
        this.again = false;
        await this.syncOnce();
      } while (this.again);
    })().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  /** Claims (new/ → cur/) and forgets the named messages; a failed claim is logged, the message stays held. */
  async claim(names: Iterable<string>): Promise<void> {
    const wanted = [...names];
    // In batches: one rename at a time is bound by latency, and a resumed agent may claim 10,000.
    for (let i = 0; i < wanted.length; i += BATCH) {
      await Promise.all(
        wanted.slice(i, i + BATCH).map(async (name) => {
          const item = this.held.get(name);
          if (!item) return; // Not ours, or claimed by a call running beside this one.
          try {
            await claim(this.layout, this.owner, item);
            this.held.delete(name);
          } catch (err) {
            this.log.error(
              { inbox: this.owner, file: name, err: errorMessage(err) },
              'inbox: claim failed; the message stays unread',
            );
          }
        }),
      );
    }
  }

  private async syncOnce(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      this.log.warn({ inbox: this.owner, err: errorMessage(err) }, 'inbox: could not list new/');
      return;
    }
    const present = new Set(names);
    for (const name of this.held.keys()) if (!present.has(name)) this.held.delete(name);
    const fresh = names.filter((n) => isCandidate(n) && !this.held.has(n));
    // Oldest first, so duplicate-id warnings name the later file.
    fresh.sort();
    // Read in parallel batches, registered in name order.
    for (let i = 0; i < fresh.length; i += BATCH) {
      const batch = fresh.slice(i, i + BATCH);
      const items = await Promise.all(batch.map((name) => this.load(name)));
      batch.forEach((name, k) => this.register(name, items[k]));
    }
  }

  private async read(name: string): Promise<void> {
    this.register(name, await this.load(name));
  }

  private async load(name: string): Promise<InboxItem | undefined> {
    try {
      return await readItem(this.layout, this.owner, join(this.dir, name), { ...this.opts, log: this.log });
    } catch (err) {
      // Unreadable for a reason other than its content (EACCES, EIO): the next sync retries it.
      this.log.warn({ inbox: this.owner, file: name, err: errorMessage(err) }, 'inbox: could not read a message');
      return undefined;
    }
  }

  private register(name: string, item: InboxItem | undefined): void {
    if (!item || this.held.has(name)) return;
    this.held.set(name, item);
    const other = this.ids.get(item.message.id);
    if (other !== undefined && other !== name) {
      // Delivered all the same: a repeated id is the sender's bug, not a reason to lose mail.
      this.log.warn(
        { inbox: this.owner, id: item.message.id, file: name, earlier_file: other },
        `inbox: message id ${item.message.id} was used twice (files ${other} and ${name}); both are delivered — the sender must make unique ids`,
      );
      audit(this.layout, {
        event: 'message_duplicate_id',
        agent: this.owner,
        id: item.message.id,
        file: name,
        earlier_file: other,
        from: item.message.from,
      });
    } else {
      this.ids.set(item.message.id, name);
    }
    this.opts.onNew?.(item);
  }
}
