import { nanos } from '@nats-io/transport-node';
import { StorageType, type JetStreamManager, type RetentionPolicy } from '@nats-io/jetstream';

/**
 * Makes sure the fleet's stream `name` exists on `subject` (§18): looked up first, created
 * when missing. File storage, with a de-duplication window for message ids (`Nats-Msg-Id`) so a
 * message sent again — an outbox retry, an audit line shipped twice — is stored once.
 */
export async function ensureStream(jsm: JetStreamManager, name: string, subject: string, opts: { retention: RetentionPolicy; duplicateWindowMs: number }): Promise<void> {
  try {
    await jsm.streams.info(name);
    return;
  } catch {
    // Not there yet: create it (a second creator racing us gets the same stream).
  }
  try {
    await jsm.streams.add({ name, subjects: [subject], storage: StorageType.File, retention: opts.retention, duplicate_window: nanos(opts.duplicateWindowMs) });
  } catch (err) {
    await jsm.streams.info(name).catch(() => { throw err; });
  }
}
