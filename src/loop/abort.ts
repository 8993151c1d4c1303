/** The one abort helper of the loop (STYLE: no abort plumbing hand-written at every call site). */

/** Resolves or rejects with `p`, or rejects with the signal's reason as soon as it aborts. */
export function abortable<T>(p: PromiseLike<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(reasonOf(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reasonOf(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(p).then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/** Waits `ms`, or rejects when the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return abortable(
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
    signal,
  ).finally(() => clearTimeout(timer));
}

function reasonOf(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new Error(String(r ?? 'aborted'));
}
