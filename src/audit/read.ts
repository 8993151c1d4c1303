import { watch } from 'node:fs';
import type { Layout } from '../layout/layout.js';
import { readNewLines } from '../layout/read-lines.js';

export interface AuditFilter {
  agent?: string | undefined;
  event?: string | undefined;
}

type Line = Record<string, unknown>;

function matches(line: Line, f: AuditFilter): boolean {
  if (f.event && line.event !== f.event) return false;
  if (f.agent && !(typeof line.agent === 'string' && line.agent.startsWith(f.agent))) return false;
  return true;
}

/** Whole JSON lines from `from` on (LF framing), skipping foreign lines, plus the new offset. */
function readLines(path: string, from: number): { lines: Line[]; offset: number } {
  const { lines: raw, offset } = readNewLines(path, from);
  const lines: Line[] = [];
  for (const text of raw) {
    if (!text) continue;
    try { lines.push(JSON.parse(text) as Line); } catch { /* a foreign line: skip */ }
  }
  return { lines, offset };
}

export function readAudit(layout: Layout, filter: AuditFilter = {}): { lines: Line[]; offset: number } {
  const { lines, offset } = readLines(layout.auditFile, 0);
  return { lines: lines.filter((l) => matches(l, filter)), offset };
}

/** Prints new matching lines as they are appended, until the process is stopped. */
export async function followAudit(layout: Layout, filter: AuditFilter, offset: number, onLine: (l: Line) => void): Promise<never> {
  let pos = offset;
  const drain = () => {
    const r = readLines(layout.auditFile, pos);
    pos = r.offset;
    r.lines.filter((l) => matches(l, filter)).forEach(onLine);
  };
  // fs.watch wakes us on appends; the slow timer covers filesystems where it does not.
  try { watch(layout.state, { persistent: true }, drain); } catch { /* polling only */ }
  setInterval(drain, 1000);
  return new Promise<never>(() => undefined);
}

export function formatAuditLine(l: Line): string {
  const { ts, event, agent, pid: _pid, ...rest } = l;
  const time = typeof ts === 'string' ? ts.slice(11, 23) : '';
  const fields = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
  return `${time} ${String(event).padEnd(16)} ${String(agent ?? '-').padEnd(20)} ${fields}`;
}
