import type { AgentRecord } from './record.js';

/**
 * Where a record write goes besides the registry file (§18): a process that opened a `nats://`
 * bus registers one per fleet root, so each write of this host's records is mirrored onto the
 * bus without the registry's synchronous callers knowing of it. Nothing is registered on
 * `maildir`: a write costs one Map lookup.
 */
type Sink = (rec: AgentRecord) => void;

const sinks = new Map<string, Sink>();

export function onRecordWritten(root: string, sink: Sink): void {
  sinks.set(root, sink);
}

export function offRecordWritten(root: string): void {
  sinks.delete(root);
}

/** Called by the registry after each write it made. */
export function recordWritten(root: string, rec: AgentRecord): void {
  const sink = sinks.get(root);
  if (sink) sink(rec);
}
