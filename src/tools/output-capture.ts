/**
 * Bounded capture of a process's output: the first and the last `maxBytes / 2` bytes are kept
 * and the middle is counted, so `yes` running until its timeout cannot exhaust memory. The
 * central truncation (run-tool) cuts further to what the model is shown.
 */
export class OutputCapture {
  private readonly half: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  /** Every byte written, kept or not. */
  total = 0;

  constructor(maxBytes: number) {
    this.half = Math.max(1, Math.floor(maxBytes / 2));
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headBytes < this.half) {
      const take = Math.min(chunk.length, this.half - this.headBytes);
      this.head.push(chunk.subarray(0, take));
      this.headBytes += take;
      chunk = chunk.subarray(take);
      if (chunk.length === 0) return;
    }
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    // Drop whole chunks from the front while the rest still covers the tail half.
    while (this.tail.length > 1 && this.tailBytes - (this.tail[0]?.length ?? 0) >= this.half) {
      this.tailBytes -= this.tail.shift()?.length ?? 0;
    }
  }

  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const kept = this.headBytes + this.tailBytes;
    if (kept >= this.total) return head + Buffer.concat(this.tail).toString('utf8');
    let tail = Buffer.concat(this.tail);
    tail = tail.subarray(Math.max(0, tail.length - this.half));
    const dropped = this.total - this.headBytes - tail.length;
    return `${head}\n[… ${dropped} bytes of output not kept …]\n${tail.toString('utf8')}`;
  }
}
