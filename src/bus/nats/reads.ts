import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { clientLastPerSubject, kvOperation, wireLastPerSubject, type EachLast } from './consumer-read.js';
import { storeMayBeMissing, whenStored } from './store-window.js';
import type { Wire, WireMsg } from './wire.js';

/** JetStream's code for "stream not found" (a bucket nobody has written yet). */
const STREAM_NOT_FOUND = 10059;
const API_TIMEOUT_MS = 5_000;

/** A stream's state as its info gives it; `subjects` only when asked for by a filter. */
export interface StreamState {
  messages: number;
  last_seq: number;
  subjects?: Record<string, number>;
}

/** A subject's last message: its payload, the server's time of it, and a KV delete or purge marker's operation. */
export interface LastMessage {
  data: Uint8Array;
  time: Date;
  operation?: string;
}

/**
 * What a look at the bus reads (§18): a stream's state (and its subjects' counts under a
 * filter), a subject's last message, the account's answer — each a request and its reply, over
 * the bare reader (wire.ts) or, once a process holds the NATS client's connection, over that.
 */
export interface Reads {
  /** null: no such stream. */
  streamState(stream: string, subjectsFilter?: string): Promise<StreamState | null>;
  /**
   * null: no message on the subject. By a direct get: the value comes as the reply's payload, where the stream's
   * message get wraps it in JSON as base64 (a window of 100 records is ~100 KB, decoded byte by byte in JavaScript); a
   * stream that allows no direct gets (no responder) is read the other way.
   */
  last(stream: string, subject: string): Promise<LastMessage | null>;
  /** The server's version, once the account's info answered (JetStream is on). */
  account(): Promise<string>;
  /** Each subject's last message under `filter`, up to the stream's message `lastSeq` (consumer-read.ts). */
  lastPerSubject(stream: string, filter: string, lastSeq: number, each: EachLast): Promise<void>;
}

/** Whether `err` is JetStream's "stream not found" (the client's JetStreamApiError, or a reader's). */
export function isStreamNotFound(err: unknown): boolean {
  return err instanceof Error && (err as Error & { code?: unknown }).code === STREAM_NOT_FOUND;
}

/** A JetStream API error as the client's JetStreamApiError has it: its message and `code` (the API's err_code). */
class ApiError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** The reads over a bare reader. */
export function wireReads(wire: Wire): Reads {
  const api = async (subject: string, body: object | null): Promise<Record<string, unknown>> => {
    const m = await wire.request(`$JS.API.${subject}`, body ? JSON.stringify(body) : '', API_TIMEOUT_MS);
    if (status(m) === 503) throw new Error('no responders: is JetStream enabled on the server?');
    const reply = JSON.parse(m.data.toString('utf8')) as Record<string, unknown>;
    const error = reply.error as { code?: number; err_code?: number; description?: string } | undefined;
    if (error) throw new ApiError(error.description ?? 'JetStream API error', error.err_code ?? error.code ?? 0);
    return reply;
  };
  const stored = new Set<string>();
  const streamState = async (stream: string, subjectsFilter?: string): Promise<StreamState | null> => {
    const subjects: Record<string, number> = {};
    let state: StreamState | undefined;
    // A long list of subjects comes in pages (the client's streams.info does the same).
    for (let offset = 0; ;) {
      let r;
      try {
        r = await api(`STREAM.INFO.${stream}`, subjectsFilter ? { subjects_filter: subjectsFilter, offset } : null);
      } catch (err) {
        if (isStreamNotFound(err)) return null;
        throw err;
      }
      state = r.state as StreamState;
      const page = Object.keys(state.subjects ?? {});
      Object.assign(subjects, state.subjects);
      offset += page.length;
      if (!subjectsFilter || !page.length || offset >= Number(r.total ?? 0)) break;
    }
    return subjectsFilter ? { ...state!, subjects } : state!;
  };
  return {
    streamState: (stream, subjectsFilter) => filteredSafely(streamState, stream, subjectsFilter, wire.version, stored),
    async last(stream, subject) {
      const m = await wire.request(`$JS.API.DIRECT.GET.${stream}.${subject}`, '', API_TIMEOUT_MS);
      const code = status(m);
      if (code === 404) return null;
      // A stream that allows no direct gets (no responder) is read the other way.
      if (code === 503) return storedLast(api, stream, subject);
      if (code !== 0) throw new Error(`direct get ${subject}: ${m.headers?.split('\r\n')[0] ?? ''}`);
      const time = header(m, 'Nats-Time-Stamp');
      const operation = kvOperation(m.headers);
      return { data: m.data, time: new Date(Date.parse(time ?? '')), ...(operation ? { operation } : {}) };
    },
    async account() {
      await api('INFO', null);
      return wire.version;
    },
    lastPerSubject: (stream, filter, lastSeq, each) => wireLastPerSubject(wire, api, stream, filter, lastSeq, each),
  };
}

/** The reads over the NATS client's connection. */
export function clientReads(js: JetStreamClient, jsm: JetStreamManager, version: () => string | undefined): Reads {
  const stored = new Set<string>();
  const streamState = async (stream: string, subjectsFilter?: string): Promise<StreamState | null> => {
    try {
      return (await jsm.streams.info(stream, subjectsFilter ? { subjects_filter: subjectsFilter } : undefined)).state;
    } catch (err) {
      if (isStreamNotFound(err)) return null;
      throw err;
    }
  };
  return {
    streamState: (stream, subjectsFilter) => filteredSafely(streamState, stream, subjectsFilter, version(), stored),
    async last(stream, subject) {
      let m;
      try {
        m = await jsm.direct.getMessage(stream, { last_by_subj: subject });
      } catch (err) {
        // A stream that allows no direct gets (no responder) is read the other way.
        if (!(err instanceof Error) || !/no responders|503/i.test(err.message)) throw err;
        m = await jsm.streams.getMessage(stream, { last_by_subj: subject });
      }
      if (!m) return null;
      const operation = m.header?.get('KV-Operation');
      return { data: m.data, time: m.time, ...(operation ? { operation } : {}) };
    },
    async account() {
      await jsm.getAccountInfo();
      return version() ?? '?';
    },
    lastPerSubject: (stream, filter, lastSeq, each) => clientLastPerSubject({ js, jsm }, stream, filter, lastSeq, each),
  };
}

/**
 * A stream's state under a subjects filter, which reads the stream's store: on a server that may list a stream before
 * its store is made (store-window.ts), asked only once its plain state shows messages. A stream seen holding messages
 * has its store for good: `stored` (the reads' own) spares that first request from then on.
 */
async function filteredSafely(
  streamState: (stream: string, subjectsFilter?: string) => Promise<StreamState | null>,
  stream: string,
  subjectsFilter: string | undefined,
  version: string | undefined,
  stored: Set<string>,
): Promise<StreamState | null> {
  if (!subjectsFilter || stored.has(stream) || !storeMayBeMissing(version)) return streamState(stream, subjectsFilter);
  return whenStored(
    () => streamState(stream),
    () => {
      stored.add(stream);
      return streamState(stream, subjectsFilter);
    },
    (state) => state && { ...state, subjects: {} },
  );
}

/** A subject's last message by the stream's message get (JSON, the payload and headers in base64). */
async function storedLast(
  api: (subject: string, body: object | null) => Promise<Record<string, unknown>>,
  stream: string,
  subject: string,
): Promise<LastMessage | null> {
  let r;
  try {
    r = await api(`STREAM.MSG.GET.${stream}`, { last_by_subj: subject });
  } catch (err) {
    // No message on the subject (10037), or no such stream: nothing to read.
    if (isStreamNotFound(err) || (err as { code?: unknown }).code === 10037) return null;
    throw err;
  }
  const msg = r.message as { data?: string; time: string; hdrs?: string };
  const operation = kvOperation(msg.hdrs ? Buffer.from(msg.hdrs, 'base64').toString('latin1') : null);
  return {
    data: Buffer.from(msg.data ?? '', 'base64'),
    time: new Date(Date.parse(msg.time)),
    ...(operation ? { operation } : {}),
  };
}

/** A reply's status code (`NATS/1.0 404 …`): 0 when it has none. */
function status(m: WireMsg): number {
  if (!m.headers) return 0;
  const first = m.headers.slice(0, m.headers.indexOf('\r\n'));
  const code = Number(first.split(' ')[1]);
  return Number.isInteger(code) ? code : 0;
}

/** A header's last value in a reply's headers' block. */
function header(m: WireMsg, name: string): string | undefined {
  if (!m.headers) return undefined;
  let value: string | undefined;
  for (const line of m.headers.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === name.toLowerCase())
      value = line.slice(colon + 1).trim();
  }
  return value;
}
