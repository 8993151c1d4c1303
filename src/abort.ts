import { sleep as wait } from './sleep.js';

/** The one abort helper (CONTRIBUTING.md, "How the code reads" 11: no abort plumbing hand-written at every call site): the loop and the tool wrapper race their work against a signal with it. */

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

/** Waits `ms`, or rejects with the signal's reason when it aborts (a retry delay ends the turn). */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  await wait(ms, signal);
  if (signal.aborted) throw reasonOf(signal);
}

function reasonOf(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new Error(String(r ?? 'aborted'));
}
