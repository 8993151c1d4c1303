import type { ClaimResult } from '../inbox/claim.js';
import type { DeliverOptions, Delivered } from '../inbox/deliver.js';
import type { MessageDraft } from '../inbox/message.js';
import type { InboxItem } from '../inbox/read.js';
import type { CapsBus } from '../fleet/caps-port.js';
import type { AgentRecord } from '../fleet/record.js';

/**
 * The transport boundary (docs/design.md §18): what the fleet's mail goes through. One
 * narrow interface, two implementations: `maildir` (one machine, today's files) and
 * `nats` (JetStream, several machines). Each host keeps its Maildirs as the local spool
 * either way, so the harness, the shell recipe (inbox/README.md) and `status` read mail the
 * same on both; a bus only changes how a message reaches the recipient's spool
 * (docs/decisions-hosts.md, "The bus carries mail; the Maildir stays the spool").
 */
export interface Bus {
  /** `maildir`, or the server's URL. */
  readonly url: string;
  readonly kind: 'maildir' | 'nats';
  readonly mail: MailBus;
  /** Caps that must hold fleet-wide: running slots and tree spawns (§5.2). */
  readonly caps: CapsBus;
  readonly records: RecordsBus;
  /** The fleet's audit log across hosts (§9, §18). */
  readonly audit: AuditBus;
  /**
   * `flotilla gc`'s part on the bus, after the host's own (§18): the records its gc removed
   * from this registry (src/bus/gc-owed.ts), their names in this host's recent list and their
   * once-markers, and the trees bucket's keys of trees nothing on the bus belongs to any more.
   * Revision-checked: a put by another process meanwhile stays. Throws when the bus cannot
   * answer (what is owed stays owed). On `maildir` nothing: the registry is all there is.
   */
  gc(opts?: { now?: number }): Promise<BusGcResult>;
  /** Can this process reach the bus now? For `status` and `doctor`: never throws. */
  reach(): Promise<BusReach>;
  /** Flushes what is queued and lets go of the connection. */
  close(): Promise<void>;
}

export interface BusReach {
  ok: boolean;
  /** One line: what was reached, or why not and what to do. */
  detail: string;
  /** The server's version, when one was reached (nats-server's, on `nats`). */
  version?: string;
}

export interface MailBus {
  /**
   * Delivers one message (§4). Resolves once the message is durable: in the recipient's
   * new/ on `maildir`; acknowledged by the stream, or kept in this host's outbox while the
   * bus is unreachable, on `nats` (`queued` says which).
   */
  deliver(draft: MessageDraft, opts?: DeliverOptions): Promise<Delivered & { queued?: boolean }>;
  /** Claims a message in `owner`'s spool: `link(new/x → cur/x:2,S)` then unlink, exactly one claimer wins. */
  claim(owner: string, item: InboxItem | string): Promise<ClaimResult>;
  /**
   * Keeps `owners`' spools fed from the bus until the returned function is called; on
   * `maildir` there is nothing to feed (senders write the spool themselves).
   */
  receive(owners: readonly string[]): Promise<() => Promise<void>>;
  /**
   * Moves what waits on the bus for `owners` into their spools now and returns (a person's
   * `inbox` and `status`: nobody's harness feeds `human`). Gives up quietly when the bus is
   * unreachable or slow; the mail stays on the bus.
   */
  collect(owners: readonly string[]): Promise<void>;
  /**
   * How many messages for each of `owners` wait on the bus, not yet in their spools, without
   * moving them (`status`'s unread count of an ended agent, whose harness no longer feeds its
   * spool). Owners with none are left out; empty on `maildir` (senders write the spool) and
   * when the bus is unreachable or slow.
   */
  waitingOnBus(owners: readonly string[]): Promise<Map<string, number>>;
}

/**
 * The fleet's records across hosts (§18). Each host keeps its own registry files as the
 * writer's copy (the registry's callers stay synchronous); on `nats` each record is mirrored
 * into the fleet's RECORDS bucket by the host that runs the agent, so every host sees them all.
 * On `maildir` there is one host, and all of it is the local registry.
 */
export interface RecordsBus {
  /**
   * Brings this host's current copy of `rec`'s record onto the bus (the local file when there
   * is one, else `rec`). Never throws: a bus that is down is caught up by the next publish or
   * heartbeat. Resolves `lost` when the fleet has declared the agent lost meanwhile (§17.8);
   * an unchanged record is not sent again, nor its copy on the bus read, unless `check`.
   */
  publish(rec: AgentRecord, opts?: { check?: boolean }): Promise<'published' | 'lost' | 'unreachable' | 'local'>;
  /** A record by id: this host's registry first, then the bus; undefined when neither has it. */
  get(id: string): Promise<AgentRecord | undefined>;
  /**
   * Every host's records (this host's from its registry), oldest first. A bus that does not
   * answer within `timeoutMs` (default 5 s: `status` must answer) gives this host's alone.
   */
  list(opts?: { timeoutMs?: number }): Promise<AgentRecord[]>;
  /**
   * Every other host's records, from the bus only (`status --all`): this host's registry is
   * not read, so its own history is not read twice. Throws when the bus cannot answer.
   */
  others(): Promise<AgentRecord[]>;
  /**
   * One tree on the other hosts, from the bus only (list_agents, the budget check): its live
   * records (live keys) and its ended agents' final usage as kept (nats/usage.ts), by agent id
   * — never the fleet's ended history, so the cost grows with the tree, not with the fleet's
   * past. An ended agent's record is then one `get`. Throws when the bus cannot answer.
   */
  tree(
    rootId: string,
  ): Promise<{ live: AgentRecord[]; ended: Map<string, { tokens: number; costUsd: number; host: string | null }> }>;
  /**
   * The records whose id starts with `prefix` on every host, found by the bus's key names
   * (no other record is read). Throws when the bus cannot answer.
   */
  find(prefix: string): Promise<AgentRecord[]>;
  /**
   * The other hosts' live records (and the ones the fleet marked lost), from the bus only,
   * without their ended history (docs/decisions-hosts.md "Records on the bus"). Throws when the bus
   * cannot answer.
   */
  live(): Promise<AgentRecord[]>;
  /**
   * The other hosts' records as `status` shows them (§17.6): their live ones and, per host,
   * the `window` that ended last, with how many more ended there — never the whole history.
   * Throws when the bus cannot answer.
   */
  recent(window: number): Promise<RecentRecords>;
  /**
   * This host's heartbeat (at most one write per beat interval, whichever process beats).
   * True when this process put it: the one that beats also looks for lost hosts (§17.8).
   */
  beat(): Promise<boolean>;
  /** Each host's last heartbeat, this host's first, and whether it counts as lost. */
  hosts(): Promise<HostBeat[]>;
  /**
   * Marks another host's live agent `lost` with a revision-checked update of its record on
   * the bus, so of every reader that tries, exactly one wins (§17.8), then takes the
   * once-marker of the task the mark ends. Resolves, for the winner, the record as marked and
   * its claim on that marker (`won`: it tells the parent); null for everyone else (already
   * terminal, someone else won, the host beat again meanwhile, or the bus is away). Never on
   * `maildir` (one host).
   */
  markLost(id: string, reason: (rec: AgentRecord) => string): Promise<LostMark | null>;
  /**
   * Takes the fleet-wide once-marker of `id`'s task `task` (§5.7 across hosts): a create in
   * the DONE bucket, which exactly one writer wins, so a completion from the agent's own host
   * and a `lost` notice from another can never both go out. `host` takes it for the agent's
   * own completion (taking it again after a crash of this host's own sender is `won`); `lost`
   * for the notice. On `maildir` always `won`: the host's own marker is the only one.
   */
  takeDone(id: string, task: number, by: 'host' | 'lost'): Promise<DoneClaim>;
}

/**
 * The audit log across hosts (§9, §18; docs/decisions-hosts.md "The audit log on the bus"). Each
 * host's `state/audit.jsonl` stays the writer's copy, written first as on one machine; on
 * `nats` its lines are copied onto the fleet's audit stream by processes of that host that
 * hold a connection anyway (a harness's heartbeat, `status`, `audit`), never by the writer.
 */
export interface AuditBus {
  /**
   * Sends this host's lines the bus does not hold yet, in order, and moves the host's cursor
   * on. Never throws; resolves how many lines the bus took. A process that shipped once ships
   * again as its bus closes, so its own last lines go with it.
   */
  ship(): Promise<number>;
  /**
   * Other hosts' lines from the bus (or `host`'s alone), each with its writer's `host`, from
   * stream position `from` on; `next` is where to read on from. Throws when the bus cannot answer.
   */
  read(opts?: { host?: string; from?: number }): Promise<{ lines: HostAuditLine[]; next: number }>;
}

/** What `flotilla gc` removed from the bus. */
export interface BusGcResult {
  /** Ids of this host's ended records removed from the records bucket. */
  records: string[];
  /** Roots of the trees whose spawn numbers and kept usage left the trees bucket. */
  trees: string[];
  /** Tasks' once-markers of those records removed. */
  markers: number;
}

/** An audit line as the bus gives it back: the line's fields and the host that wrote it. */
export type HostAuditLine = Record<string, unknown> & { host: string };

/**
 * `won`: this caller sends the task's completion. `lost`: the fleet marked the agent lost
 * first and told its parent. `sent`: its own host's completion took it first. `unreachable`:
 * the bus did not answer.
 */
export type DoneClaim = 'won' | 'lost' | 'sent' | 'unreachable';

/** Other hosts' live records and their last ended ones; `more`: per host, how many ended records were not read. */
export interface RecentRecords {
  records: AgentRecord[];
  more: Record<string, number>;
}

/**
 * An agent the fleet marked lost: its record as the bus now holds it, and the claim on the once-marker of the task it
 * ends.
 */
export interface LostMark {
  rec: AgentRecord;
  claim: DoneClaim;
}

/** A host's last heartbeat as a reader sees it (§18, "Hosts on the bus"). */
export interface HostBeat {
  host: string;
  /** ISO time of its last heartbeat, null when it never beat. */
  at: string | null;
  /** Milliseconds since its last heartbeat (never negative). */
  ageMs: number | null;
  /**
   * Older than its `lost_after_secs` (shown LOST; its live agents are marked lost by a reader that heard the bus
   * meanwhile).
   */
  lost: boolean;
  /** Its `lost_after_secs`, in milliseconds. */
  lostAfterMs: number;
  /** This machine. */
  self: boolean;
}
