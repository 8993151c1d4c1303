import type { Layout } from '../layout/layout.js';
import { CLI_ENTRY, TOOLS_DIR } from '../layout/package.js';
import { HARNESS_KIND_ENV } from '../start-done.js';
import { pidNamespaceId, PID_NAMESPACE_ENV } from './proc.js';
import type { AgentRecord } from './record.js';

/**
 * The environment that makes a process one agent's (§5): which fleet, which agent, its depth
 * and parent, the same Node and CLI, and a PATH on which `spawn-agent` resolves. Both a child
 * harness (built by the spawner) and the commands an agent's tools run (built by the harness)
 * get exactly these; only what surrounds them differs.
 */
export function agentEnvironment(layout: Layout, rec: AgentRecord, path: string | undefined): Record<string, string> {
  return {
    FLOTILLA_ROOT: layout.root,
    FLOTILLA_AGENT_ID: rec.id,
    FLOTILLA_DEPTH: String(rec.depth),
    FLOTILLA_PARENT_ID: rec.parentId ?? '',
    FLOTILLA_NODE: process.execPath,
    FLOTILLA_CLI: CLI_ENTRY,
    PATH: pathWithTools(path),
    // Its board (§15): `flotilla task` from its shell and `flotilla mcp` in its CLI default to it.
    FLOTILLA_BOARD: rec.board ?? 'fleet',
    // The pid namespace the fleet's harnesses see: a command under bubblewrap, with a /proc of
    // its own, knows from it that a missing /proc entry there proves no death (fleet/proc.ts).
    ...fleetPidNamespace(),
    // Its commits carry its id (docs/security.md, "Commits in the sandbox"), whatever the user's git config says.
    GIT_AUTHOR_NAME: rec.id,
    GIT_AUTHOR_EMAIL: `${rec.id}@flotilla`,
    GIT_COMMITTER_NAME: rec.id,
    GIT_COMMITTER_EMAIL: `${rec.id}@flotilla`,
  };
}

function fleetPidNamespace(): Record<string, string> {
  const ns = process.env[PID_NAMESPACE_ENV] || pidNamespaceId();
  return ns ? { [PID_NAMESPACE_ENV]: ns } : {};
}

/** Variables `agentEnvironment` (and the slot handoff) own: never passed through from a spawner's own environment. */
export const AGENT_IDENTITY_VARS: ReadonlySet<string> = new Set([
  'FLOTILLA_ROOT',
  'FLOTILLA_AGENT_ID',
  'FLOTILLA_DEPTH',
  'FLOTILLA_PARENT_ID',
  'FLOTILLA_NODE',
  'FLOTILLA_CLI',
  'FLOTILLA_SLOT',
  HARNESS_KIND_ENV,
  'FLOTILLA_BOARD',
  PID_NAMESPACE_ENV,
]);

/**
 * `PATH` with Flotilla's tools first and every directory once (a chain of agents would otherwise grow it each level).
 */
export function pathWithTools(path: string | undefined): string {
  return [...new Set([TOOLS_DIR, ...(path ?? '').split(':').filter(Boolean)])].join(':');
}
