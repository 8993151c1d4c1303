import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isErrno } from '../errors.js';
import { recordLiveness } from '../fleet/liveness.js';
import { recentRecords } from '../fleet/live.js';
import { queueLine } from '../fleet/slot-queue.js';
import { baseName, listNames, maildir, unreadCount, unreadNames } from '../inbox/maildir.js';
import type { InboxMessage } from '../inbox/message.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { leaseMarks, leaseSummary } from '../leases/summary.js';
import { formatScheduleSummary, scheduleSummary } from '../schedule/status-lines.js';
import { readSeen } from './seen.js';
import { gatherTasks, taskRows } from './tasks.js';
import type { TeamSource } from './team-poll.js';
import { buildSnapshot, pendingApprovals, type PendingApproval, type Snapshot } from './rows.js';

/**
 * Reads the fleet from disk for the dashboard: registry records, unread counts (files in each
 * new/), and approval requests in the human inbox. Read-only: it never claims, moves or
 * quarantines a message. Message files never change once delivered, so each is parsed once.
 */
export type ParseMessage = (text: string) => InboxMessage;

/**
 * Text that may hold an approval or secret request. Only such files need the message parser
 * (gray-matter and js-yaml, ~10 ms to load), so a dashboard whose human inbox holds only
 * completions and messages draws its first frame without loading it.
 */
const MAYBE_REQUEST = /approval_request|secret_request/;
/** How often the dashboard reads worktree agents' branches from git. */
const WORK_EVERY_MS = 2000;

export class FleetReader {
  /** Parsed approval requests by message base name (null: not an approval request, or unreadable). */
  private readonly requests = new Map<string, PendingApproval | null>();
  /** The sender of each unread plain message to `human` (null: another kind), by file name. */
  private readonly senders = new Map<string, string | null>();
  private parse: ParseMessage | null = null;
  private work: ReadonlyMap<string, string> = new Map();
  private workAt = -Infinity;
  private workBusy = false;
  /**
   * The last snapshot skipped a file that may be a request because the parser was not loaded: `loadParser()`, then read
   * again.
   */
  needsParser = false;

  /** `team`: on a bus, the fleet's boards and leases as last read (team-poll.ts); else this host's files. */
  constructor(
    private readonly layout: Layout,
    private readonly team?: TeamSource,
  ) {}

  async loadParser(): Promise<void> {
    this.parse ??= (await import('../inbox/parse.js')).parseMessage;
  }

  snapshot(now = Date.now()): Snapshot {
    // Live agents and the last ones to finish: a long history costs the dashboard nothing.
    const { records } = recentRecords(this.layout);
    const unread = new Map<string, number>();
    for (const rec of records) unread.set(rec.id, unreadCount(this.layout, rec.id));
    const status = new Map(records.map((r) => [r.id, r.status]));
    // A secret request is answered once its handoff socket is gone (§11); a tool approval once its answer file exists.
    const requests = this.approvalRequests();
    const secret = new Set(requests.filter((r) => r.kind === 'secret').map((r) => r.requestId));
    const answered = (req: string) =>
      secret.has(req) ? !existsSync(this.layout.secretSocket(req)) : existsSync(this.layout.approvalAnswer(req));
    const approvals = pendingApprovals(requests, (id) => status.get(id), answered);
    const humanNew = unreadNames(this.layout, 'human');
    const schedules = scheduleSummary(this.layout);
    const tasks = this.team ? taskRows(this.team.listings() ?? [], now) : gatherTasks(this.layout, now);
    const leases = this.team ? this.team.leases() : existsSync(this.layout.leasesDir) ? undefined : null;
    return {
      ...buildSnapshot({
        records,
        unread,
        approvals,
        now,
        liveness: recordLiveness,
        humanUnread: humanNew.length,
        queue: queueLine(this.layout),
        asks: this.asks(humanNew),
        seen: readSeen(this.layout),
        ...(leases === null ? {} : { leases: leaseMarks(leaseSummary(this.layout, leases)) }),
        ...(this.refreshWork(records, now) ? { work: this.work } : {}),
      }),
      ...(schedules ? { schedules: formatScheduleSummary(schedules) } : {}),
      ...(tasks.length > 0 ? { tasks } : {}),
    };
  }

  /**
   * Branch marks of agents on a branch, in a worktree or in place (§12), from git in the
   * background at most every WORK_EVERY_MS: a snapshot shows the last ones read, never waits
   * for git. False when no agent shown has a branch.
   */
  private refreshWork(records: readonly AgentRecord[], now: number): boolean {
    const shown = records.filter((r) => r.base);
    if (shown.length === 0) return false;
    if (!this.workBusy && now - this.workAt >= WORK_EVERY_MS) {
      this.workBusy = true;
      this.workAt = now;
      void import('../work/standing.js')
        .then(async (m) => {
          const of = await m.branchStanding(this.layout, shown);
          this.work = new Map([...of].map(([id, s]) => [id, m.standingMark(s)]));
        })
        .catch(() => undefined)
        .finally(() => {
          this.workBusy = false;
        });
    }
    return true;
  }

  /** Unread plain messages to `human`, counted by sender (each file's header read once). */
  private asks(names: readonly string[]): Map<string, number> {
    const dir = maildir(this.layout, 'human').new;
    const out = new Map<string, number>();
    const present = new Set(names);
    for (const name of names) {
      if (!this.senders.has(name)) this.senders.set(name, messageSender(join(dir, name)));
      const from = this.senders.get(name);
      if (from) out.set(from, (out.get(from) ?? 0) + 1);
    }
    for (const name of this.senders.keys()) if (!present.has(name)) this.senders.delete(name);
    return out;
  }

  /** Every approval request in the human inbox, read or not. */
  private approvalRequests(): PendingApproval[] {
    const box = maildir(this.layout, 'human');
    const out: PendingApproval[] = [];
    const present = new Set<string>();
    let skipped = false;
    for (const [dir, names] of [
      [box.new, listNames(box.new)],
      [box.cur, listNames(box.cur)],
    ] as const) {
      for (const name of names) {
        const key = baseName(name);
        present.add(key);
        if (!this.requests.has(key)) {
          const read = readRequest(join(dir, name), this.parse);
          // undefined: moved while we looked (claimed into cur/); it is read on the next pass.
          if (read === 'needs-parser') skipped = true;
          else if (read !== undefined) this.requests.set(key, read);
        }
        const req = this.requests.get(key);
        if (req) out.push(req);
      }
    }
    // Forget files that are gone (deleted by a person or gc).
    for (const key of this.requests.keys()) if (!present.has(key)) this.requests.delete(key);
    this.needsParser = skipped;
    return out;
  }
}

/**
 * Who sent a plain message (`kind: message`), from its header lines; null for other kinds
 * (completions, requests, system notices) and unreadable files. Headers are written one
 * `key: value` a line by serialize.ts, and agent ids are plain words.
 */
function messageSender(path: string): string | null {
  try {
    const text = readFileSync(path, 'utf8');
    const head = text.slice(0, text.indexOf('\n---', 3) + 1 || 2000);
    if (!/^kind: message$/m.test(head)) return null;
    const from = /^from: ([A-Za-z0-9_-]+)$/m.exec(head)?.[1];
    return from && from !== 'human' ? from : null;
  } catch {
    return null;
  }
}

/**
 * The request in a message file; null for other messages and bad files; undefined when the
 * file is gone; 'needs-parser' when it may be a request and no parser is loaded yet.
 */
function readRequest(path: string, parse: ParseMessage | null): PendingApproval | null | undefined | 'needs-parser' {
  try {
    const text = readFileSync(path, 'utf8');
    if (!MAYBE_REQUEST.test(text)) return null;
    if (!parse) return 'needs-parser';
    const msg = parse(text);
    if (msg.kind === 'secret_request') {
      return {
        requestId: msg.request_id,
        agentId: msg.from,
        tool: 'request_secret',
        summary: msg.summary,
        timestamp: msg.timestamp,
        kind: 'secret',
        key: msg.key,
        ...(msg.ttl_secs ? { ttlSecs: msg.ttl_secs } : {}),
      };
    }
    if (msg.kind !== 'approval_request') return null;
    return {
      requestId: msg.request_id,
      agentId: msg.from,
      tool: msg.tool,
      summary: msg.summary,
      timestamp: msg.timestamp,
    };
  } catch (err) {
    return isErrno(err, 'ENOENT') ? undefined : null;
  }
}
