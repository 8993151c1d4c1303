import { readFileSync } from 'node:fs';
import { FlotillaError } from '../errors.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { loadRuntime, type Runtime, type SessionTurn, type VendorRuntimeName } from '../runtimes/index.js';
import { newestSessionFile } from '../runtimes/session-file.js';

/**
 * A vendor agent's conversation lives in its CLI's own session file, in the agent's folder
 * `state/runtimes/<id>/` (docs/runtimes.md, "Resume and transcript"): what `flotilla
 * transcript` renders and `flotilla resume` continues. The folder is the agent's for as long
 * as its record is: nothing prunes it.
 */
export interface VendorSession {
  runtime: Runtime;
  file: string;
  turns: SessionTurn[];
}

/** The agent's current session (its CLI's newest session file), read whole; a clear error when there is none. */
export async function readVendorSession(
  layout: Layout,
  rec: Pick<AgentRecord, 'id' | 'runtime'>,
): Promise<VendorSession> {
  const runtime = await loadRuntime(rec.runtime as VendorRuntimeName);
  const dir = layout.runtimeDir(rec.id);
  const file = newestSessionFile(runtime, dir);
  if (!file) {
    throw new FlotillaError(
      `${rec.id} is a ${runtime.title} agent and ${runtime.title} wrote no session file in ${dir} (it never reached its first turn, or the folder was removed)`,
      { code: 'session-missing' },
    );
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new FlotillaError(
      `cannot read ${rec.id}'s ${runtime.title} session file ${file}: ${(err as Error).message}`,
      { code: 'session-unreadable', cause: err },
    );
  }
  return { runtime, file, turns: runtime.sessionTurns(text) };
}
