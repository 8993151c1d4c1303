import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { redactValue } from '../secrets/redact.js';

/**
 * The narrow logging interface the rest of the code depends on, so modules can log
 * without knowing where the lines go.
 */
export interface Log {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const nullLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

/** pino's level numbers, so the lines read the same as before and `jq 'select(.level>=40)'` works. */
const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

/**
 * A JSON-lines logger writing to `state/logs/<id>.log` — never to a person's screen. Each line
 * is `{"level":30,"time":<ms>,"pid":…,"agent":…,…fields,"msg":…}`, pino's shape. Written with
 * one synchronous append per line (as pino's `sync: true` destination did), so a crash loses no
 * line. Hand-written rather than pino: loading pino cost ~85 ms of CPU at every harness start
 * (§14), and these four methods are all the harness uses.
 */
export async function createAgentLogger(
  layout: Layout,
  agentId: string,
  level = process.env.FLOTILLA_LOG_LEVEL ?? 'info',
): Promise<Log> {
  const path = layout.log(agentId);
  mkdirSync(dirname(path), { recursive: true });
  const min = LEVELS[level as keyof typeof LEVELS] ?? (level === 'silent' ? Infinity : LEVELS.info);
  const line = (n: number, obj: object, msg?: string): void => {
    if (n < min) return;
    // Every log call's object and message lose any secret value this process holds (§11).
    let fields: object;
    let text: string | undefined;
    try {
      [fields, text] = redactValue([obj, msg] as const);
    } catch {
      // A cyclic object cannot be walked for secrets: log without its fields rather than unredacted.
      [fields, text] = [{ note: 'fields not loggable' }, redactValue(msg)];
    }
    const entry: Record<string, unknown> = {
      level: n,
      time: Date.now(),
      pid: process.pid,
      agent: agentId,
      ...serializable(fields),
    };
    if (text !== undefined) entry.msg = text;
    try {
      appendFileSync(path, stringify(entry) + '\n');
    } catch {
      // A log that cannot be written (disk full, folder removed) never stops the agent.
    }
  };
  return {
    debug: (obj, msg) => line(LEVELS.debug, obj, msg),
    info: (obj, msg) => line(LEVELS.info, obj, msg),
    warn: (obj, msg) => line(LEVELS.warn, obj, msg),
    error: (obj, msg) => line(LEVELS.error, obj, msg),
  };
}

/** Errors log their message and stack (JSON.stringify would write `{}`), as pino's `err` serializer did. */
function serializable(obj: object): Record<string, unknown> {
  if (obj instanceof Error) return { err: serializable({ e: obj }).e };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    out[k] = v instanceof Error ? { type: v.name, message: v.message, stack: v.stack } : v;
  }
  return out;
}

/** JSON that never throws: a cycle or a BigInt in a logged object must not lose the line. */
function stringify(entry: Record<string, unknown>): string {
  try {
    return JSON.stringify(entry, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  } catch {
    return JSON.stringify({
      level: entry.level,
      time: entry.time,
      pid: entry.pid,
      agent: entry.agent,
      msg: entry.msg,
      note: 'fields not serializable',
    });
  }
}
