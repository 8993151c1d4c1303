import type { Log } from '../audit/logger.js';
import type { Injection, ModelMessage } from '../loop/types.js';
import type { TranscriptWriter } from '../transcript/writer.js';
import type { InboxPort } from './session-deps.js';

/**
 * Writes a run's messages to the transcript as its turns end, and claims surfaced mail only
 * once the transcript holds it (§4): a crash in between re-delivers it. A message the loop
 * surfaced (a person's line, inbox mail) is written as `surfaced`, not as a plain message.
 */
export class TurnRecorder {
  private broken = false;
  private surfaced = new Map<ModelMessage, Injection>();
  /** How many of the run's messages are in the transcript. */
  private recorded = 0;

  constructor(
    private readonly transcript: TranscriptWriter | null,
    private readonly inbox: InboxPort,
    private readonly log: Log,
    private readonly notice: (text: string) => void,
  ) {}

  /** A run begins with `count` messages already recorded. */
  begin(count: number): void {
    this.surfaced = new Map();
    this.recorded = count;
  }

  /** The loop put this injection into the conversation as `message`. */
  surface(message: ModelMessage, injection: Injection): void {
    this.surfaced.set(message, injection);
  }

  /** The run's messages after those recorded so far (its end: what the last turn left). */
  async recordRest(all: ModelMessage[]): Promise<void> {
    await this.record(all.slice(this.recorded));
  }

  async record(messages: ModelMessage[]): Promise<void> {
    const { transcript } = this;
    for (const m of messages) {
      const inj = this.surfaced.get(m);
      if (!inj) transcript?.append({ type: 'message', message: m });
      else if (inj.source === 'human') transcript?.append({ type: 'surfaced', source: 'human', text: inj.text });
      else {
        const kept = transcript
          ? transcript.append({
              type: 'surfaced',
              source: 'inbox',
              ids: inj.ids ?? [],
              files: inj.files ?? [],
              text: inj.text,
            })
          : true;
        // Claimed only now that the transcript holds it: a crash before this re-delivers.
        if (kept) {
          this.broken = false;
          await this.inbox.claim(inj.files ?? []);
        } else this.failed();
      }
    }
    this.recorded += messages.length;
  }

  /**
   * Transcript writes fail (disk full): the agent goes on, but claims nothing it could not record, and says so once.
   */
  private failed(): void {
    if (this.broken) return;
    this.broken = true;
    const text =
      'transcript cannot be written (disk full?): mail shown to the model stays unread in new/ until the transcript records again';
    this.log.warn({}, text);
    this.notice(text);
  }
}
