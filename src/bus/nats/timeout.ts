/** The bus's one timeout: `p`'s outcome, or an error saying the bus did not answer within `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer from the bus within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/** Milliseconds as the nanoseconds JetStream's API counts in (the client's `nanos`, without loading it). */
export const nanos = (ms: number): number => ms * 1_000_000;
