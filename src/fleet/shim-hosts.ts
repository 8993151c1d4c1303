import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from '../layout/layout.js';

const PID_FILE = /^_shim-host\.(\d+)\.pid$/;

/**
 * The fleet's running shim hosts (shim-host/start.ts), each by the file it keeps among the doors while it runs: its pid
 * and start time, so a reused pid is never taken for one. Usually one; two while a host that found its code rebuilt
 * still serves its agents and a new one takes the new agents (shim-host/server.ts).
 */
export function shimHosts(layout: Layout): { pid: number; start: string }[] {
  let names: string[];
  try {
    names = readdirSync(layout.doorsDir);
  } catch {
    return [];
  }
  const out: { pid: number; start: string }[] = [];
  for (const name of names) {
    const pid = PID_FILE.exec(name)?.[1];
    if (!pid) continue;
    try {
      const start = readFileSync(join(layout.doorsDir, name), 'utf8').trim();
      if (start) out.push({ pid: Number(pid), start });
    } catch {
      /* ended meanwhile */
    }
  }
  return out;
}
