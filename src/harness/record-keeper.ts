import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import { isTerminal } from '../fleet/record-status.js';
import type { AgentRecord } from '../fleet/record.js';
import { updateRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';

/** A change nobody flushed reaches disk within this long (what `status` and `watch` may lag behind). */
export const LAZY_FLUSH_MS = 250;

/**
 * The harness's view of its own registry record (§3: it is the only writer while alive).
 * Changes apply in memory at once (the pane sees them) and reach disk coalesced: one
 * fsync'd write at each turn boundary (`flush()`), at once for the moments others act on
 * (a task's end, idle, a terminal state), and otherwise within LAZY_FLUSH_MS — so nothing is
 * written between a message's arrival and the model seeing it. A failed write is kept in
 * memory and retried by the next one.
 */
export class RecordKeeper {
  current: AgentRecord;
  private pending: Partial<AgentRecord> | null = null;
  private timer: NodeJS.Timeout | undefined;
  /** The status this keeper last saw on disk: a different one there was written by someone else (an approval). */
  private diskStatus: AgentRecord['status'];

  constructor(
    private readonly layout: Layout,
    record: AgentRecord,
    private readonly config: Config,
    private readonly onChange: (rec: AgentRecord) => void,
  ) {
    this.current = record;
    this.diskStatus = record.status;
  }

  set(patch: Partial<AgentRecord>): void {
    this.pending = { ...this.pending, ...patch };
    this.current = { ...this.current, ...patch };
    const urgent =
      patch.lastTask !== undefined ||
      (patch.status !== undefined && (patch.status === 'idle' || isTerminal(patch.status)));
    if (urgent) this.flush();
    else {
      this.onChange(this.current);
      if (!this.timer) {
        this.timer = setTimeout(() => this.flushQuietly(), LAZY_FLUSH_MS);
        this.timer.unref();
      }
    }
  }

  /** Writes what changed since the last write (one fsync'd record write); nothing when nothing did. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const patch = this.pending;
    if (!patch) return;
    this.pending = null;
    try {
      this.current = updateRecord(this.layout, this.current.id, (disk) => {
        // A status someone else wrote since (waiting_approval from the approvals) wins over an older one of ours.
        if (patch.status === undefined || disk.status === this.diskStatus) return patch;
        const { status: _ours, ...rest } = patch;
        return rest;
      });
      this.diskStatus = this.current.status;
    } catch (err) {
      // A state that can no longer change (terminal) or a vanished record: keep going in memory.
      this.current = { ...this.current, ...(patch.status ? {} : patch) };
      if (!(err instanceof FlotillaError && err.code === 'illegal-transition')) {
        this.pending = { ...patch, ...(this.pending as Partial<AgentRecord> | null) };
        throw err;
      }
    }
    this.onChange(this.current);
  }

  private flushQuietly(): void {
    try {
      this.flush();
    } catch {
      // Kept in `pending`: the next turn boundary writes it again.
    }
  }

  beginTask(): void {
    const next =
      this.current.lastTask && this.current.lastTask.task >= this.current.task
        ? this.current.task + 1
        : this.current.task;
    if (next !== this.current.task) this.set({ task: next });
  }

  addUsage(input: number, output: number): void {
    const u = this.current.usage;
    const price = this.config.models.prices[this.current.model];
    const cost = price
      ? (u.costUsd ?? 0) + (input * price.input_per_mtok + output * price.output_per_mtok) / 1e6
      : u.costUsd;
    this.set({ usage: { inputTokens: u.inputTokens + input, outputTokens: u.outputTokens + output, costUsd: cost } });
  }
}
