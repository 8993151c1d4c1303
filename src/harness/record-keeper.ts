import type { Config } from '../config/schema.js';
import { FlotillaError } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import { updateRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';

/**
 * The harness's view of its own registry record (§3: it is the only writer while alive).
 * Writes go straight through; a failed write is kept in memory and retried by the next one.
 */
export class RecordKeeper {
  current: AgentRecord;

  constructor(
    private readonly layout: Layout,
    record: AgentRecord,
    private readonly config: Config,
    private readonly onChange: (rec: AgentRecord) => void,
  ) {
    this.current = record;
  }

  set(patch: Partial<AgentRecord>): void {
    try {
      this.current = updateRecord(this.layout, this.current.id, patch);
    } catch (err) {
      // A state that can no longer change (terminal) or a vanished record: keep going in memory.
      this.current = { ...this.current, ...(patch.status ? {} : patch) };
      if (!(err instanceof FlotillaError && err.code === 'illegal-transition')) throw err;
    }
    this.onChange(this.current);
  }

  beginTask(): void {
    const next = this.current.lastTask && this.current.lastTask.task >= this.current.task ? this.current.task + 1 : this.current.task;
    if (next !== this.current.task) this.set({ task: next });
  }

  addUsage(input: number, output: number): void {
    const u = this.current.usage;
    const price = this.config.models.prices[this.current.model];
    const cost = price ? (u.costUsd ?? 0) + (input * price.input_per_mtok + output * price.output_per_mtok) / 1e6 : u.costUsd;
    this.set({ usage: { inputTokens: u.inputTokens + input, outputTokens: u.outputTokens + output, costUsd: cost } });
  }
}
