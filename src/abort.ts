/**
 * The one abort helper (CONTRIBUTING.md, "How the code reads" 11: no abort plumbing hand-written at every call site):
 * the loop and the tool wrapper race their work against a signal with it.
 */

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

/**
 * Throws the signal's reason, as an Error, once it has aborted (after the one `sleep`, a retry delay ends the turn).
 */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw reasonOf(signal);
}

function reasonOf(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new Error(String(r ?? 'aborted'));
}
