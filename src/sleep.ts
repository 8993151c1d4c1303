/**
 * The one `sleep`. Waits `ms`; with a signal, returns as soon as it aborts (never rejects),
 * so a poll loop checks `signal.aborted` after it and a cancelled wait ends at once.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
