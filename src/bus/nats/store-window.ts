import type { StreamState } from './reads.js';

/**
 * A stream a server is still making (§18). nats-server before 2.9.15 — Debian 12 ships 2.9.10 — lists a new stream
 * before it has made the stream's store, and a request that reads the store in that moment (a message get, a stream
 * info with a subjects filter) panics the whole server: every host's commands then find the bus refused. A fleet's
 * first commands make its buckets while others read them (a burst of `task add` on a new board did, in the test
 * suite). 2.9.15 lists a stream only once its store is there (nats-io/nats-server b19fe508c).
 *
 * What such a stream answers safely is a plain stream info: its state is empty until the store is there, as an empty
 * stream's is, and an empty stream has nothing to read. So a look under a subjects filter asks that first on a server
 * older than 2.9.15, or one whose version is not known yet (reads.ts), and a get by key asks it before its first get
 * (bound-bucket.ts).
 */
export function storeMayBeMissing(version: string | undefined): boolean {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version ?? '');
  if (!m) return true;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return major < 2 || (major === 2 && (minor < 9 || (minor === 9 && patch < 15)));
}

/**
 * `read` (which needs the stream's store) only when the stream's plain state shows messages; `empty` otherwise: no
 * stream (null state) or one with nothing in it yet (perhaps not even its store).
 */
export async function whenStored<T>(
  plainState: () => Promise<StreamState | null>,
  read: () => Promise<T>,
  empty: (state: StreamState | null) => T,
): Promise<T> {
  const state = await plainState();
  return state && state.messages > 0 ? read() : empty(state);
}
