import type { JetStreamManager, RetentionPolicy, StreamInfo } from '@nats-io/jetstream';
import { nanos } from './timeout.js';

/**
 * Makes sure the fleet's stream `name` exists on `subject` (§18): looked up first, created
 * when missing. File storage, with a de-duplication window for message ids (`Nats-Msg-Id`) so a
 * message sent again — an outbox retry, an audit line shipped twice — is stored once.
 * `maxAgeMs` (0: no limit), when given, is the stream's bound on its messages' age, set on a
 * stream made without it or with another (the audit stream's `fleet.audit_max_age_secs`).
 */
export async function ensureStream(
  jsm: JetStreamManager,
  name: string,
  subject: string,
  opts: { retention: RetentionPolicy; duplicateWindowMs: number; maxAgeMs?: number },
): Promise<void> {
  const maxAge = opts.maxAgeMs === undefined ? undefined : nanos(opts.maxAgeMs);
  // The server refuses a de-duplication window longer than the stream's max age.
  const window = nanos(opts.maxAgeMs ? Math.min(opts.duplicateWindowMs, opts.maxAgeMs) : opts.duplicateWindowMs);
  const bound = async (info: StreamInfo): Promise<void> => {
    if (maxAge !== undefined && info.config.max_age !== maxAge)
      await jsm.streams.update(name, { max_age: maxAge, duplicate_window: window });
  };
  let info: StreamInfo | undefined;
  try {
    info = await jsm.streams.info(name);
  } catch {
    // Not there yet: create it (a second creator racing us gets the same stream).
  }
  if (info) return bound(info);
  try {
    await jsm.streams.add({
      name,
      subjects: [subject],
      storage: 'file',
      retention: opts.retention,
      duplicate_window: window,
      ...(maxAge === undefined ? {} : { max_age: maxAge }),
    });
  } catch (err) {
    // Made by a racing creator: bounded as asked all the same.
    await bound(
      await jsm.streams.info(name).catch(() => {
        throw err;
      }),
    );
  }
}
