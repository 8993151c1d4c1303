import type { Logger } from 'pino';
import type { Layout } from '../layout/layout.js';
import { redactValue } from '../secrets/redact.js';

/**
 * The narrow logging interface the rest of the code depends on, so modules can log
 * without importing pino (which only the harness loads).
 */
export interface Log {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const nullLog: Log = { debug() {}, info() {}, warn() {}, error() {} };

/** A pino JSON logger writing to `state/logs/<id>.log` — never to a person's screen. */
export async function createAgentLogger(layout: Layout, agentId: string, level = process.env.FLOTILLA_LOG_LEVEL ?? 'info'): Promise<Logger & Log> {
  const { pino } = await import('pino');
  const dest = pino.destination({ dest: layout.log(agentId), mkdir: true, sync: true });
  return pino({
    level,
    base: { agent: agentId, pid: process.pid },
    // Every log call's object and message lose any secret value this process holds (§11).
    hooks: { logMethod(args, method) { method.apply(this, redactValue(args) as Parameters<typeof method>); } },
  }, dest);
}
