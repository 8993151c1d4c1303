import { watch } from 'node:fs';
import type { Layout } from '../layout/layout.js';
import { readNewLines } from '../layout/read-lines.js';

export interface AuditFilter {
  agent?: string | undefined;
  event?: string | undefined;
  /** A schedule's own events and everything its runs did (§5.10). */
  schedule?: string | undefined;
}

type Line = Record<string, unknown>;

/**
 * A filter over lines read in order. For `schedule`, a line naming the schedule makes its
 * agent one of the schedule's runs (the spawn comes before anything the run does), so the
 * runs' own lines match from then on, also while following.
 */
export function auditMatcher(f: AuditFilter): (line: Line) => boolean {
  const runs = new Set<string>();
  return (line) => {
    if (f.event && line.event !== f.event) return false;
    if (f.agent && !(typeof line.agent === 'string' && line.agent.startsWith(f.agent))) return false;
    if (f.schedule) {
      const agent = typeof line.agent === 'string' ? line.agent : '';
      if (line.schedule === f.schedule && agent && agent !== 'human') runs.add(agent);
      if (line.schedule !== f.schedule && !runs.has(agent)) return false;
    }
    return true;
  };
}

/** Whole JSON lines from `from` on (LF framing), skipping foreign lines, plus the new offset. */
export function readAuditLines(path: string, from: number): { lines: Line[]; offset: number } {
  const { lines: raw, offset } = readNewLines(path, from);
  const lines: Line[] = [];
  for (const text of raw) {
    if (!text) continue;
    try {
      lines.push(JSON.parse(text) as Line);
    } catch {
      /* a foreign line: skip */
    }
  }
  return { lines, offset };
}

export interface AuditRead {
  lines: Line[];
  offset: number;
  /** The filter as it stands after those lines (it knows the schedule's runs), for `followAudit`. */
  matches: (line: Line) => boolean;
}

export function readAudit(layout: Layout, filter: AuditFilter = {}): AuditRead {
  const { lines, offset } = readAuditLines(layout.auditFile, 0);
  const matches = auditMatcher(filter);
  return { lines: lines.filter(matches), offset, matches };
}

/** Prints new matching lines as they are appended, until the process is stopped. */
export async function followAudit(
  layout: Layout,
  from: Pick<AuditRead, 'offset' | 'matches'>,
  onLine: (l: Line) => void,
): Promise<never> {
  const { offset, matches } = from;
  let pos = offset;
  const drain = () => {
    const r = readAuditLines(layout.auditFile, pos);
    pos = r.offset;
    r.lines.filter(matches).forEach(onLine);
  };
  // fs.watch wakes us on appends; the slow timer covers filesystems where it does not.
  try {
    watch(layout.state, { persistent: true }, drain);
  } catch {
    /* polling only */
  }
  setInterval(drain, 1000);
  return new Promise<never>(() => undefined);
}

/**
 * Lines of several hosts in one order: by time, each host's own order kept where times tie
 * (a stable sort of lists each already in its writer's order).
 */
export function mergeByTime(...lists: Line[][]): Line[] {
  const ts = (l: Line) => (typeof l.ts === 'string' ? l.ts : '');
  return lists.flat().sort((a, b) => (ts(a) < ts(b) ? -1 : ts(a) > ts(b) ? 1 : 0));
}

/** One line for a person; on a bus (`hosts`), the writing host after the time. */
export function formatAuditLine(l: Line, opts: { hosts?: boolean } = {}): string {
  const { ts, event, agent, pid: _pid, ...rest } = l;
  const { host, ...fromHost } = rest;
  const time = typeof ts === 'string' ? ts.slice(11, 23) : '';
  const fields = Object.entries(opts.hosts ? fromHost : rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const where = opts.hosts ? ` ${String(host ?? '-').padEnd(12)}` : '';
  return `${time}${where} ${String(event).padEnd(16)} ${String(agent ?? '-').padEnd(20)} ${fields}`;
}
