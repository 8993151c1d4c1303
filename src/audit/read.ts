import { closeSync, openSync, readSync, statSync, watch } from 'node:fs';
import { isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';

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

/** Reads bytes [from, end) and returns whole lines only (LF framing) plus the new offset. */
function readLines(path: string, from: number): { lines: Line[]; offset: number } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { lines: [], offset: from };
    throw err;
  }
  try {
    const size = statSync(path).size;
    if (size <= from) return { lines: [], offset: from };
    const buf = Buffer.alloc(size - from);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, from + got);
      if (n === 0) break;
      got += n;
    }
    const text = buf.subarray(0, got).toString('utf8');
    const end = text.lastIndexOf('\n');
    if (end < 0) return { lines: [], offset: from };
    const lines: Line[] = [];
    for (const raw of text.slice(0, end).split('\n')) {
      if (!raw) continue;
      try { lines.push(JSON.parse(raw) as Line); } catch { /* a foreign line: skip */ }
    }
    return { lines, offset: from + Buffer.byteLength(text.slice(0, end + 1)) };
  } finally {
    closeSync(fd);
  }
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
