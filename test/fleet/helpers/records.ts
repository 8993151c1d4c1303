import { createRecord } from '../../../src/fleet/registry.js';
import type { AgentRecord, AgentStatus } from '../../../src/fleet/record.js';
import type { Layout } from '../../../src/layout/layout.js';

/** Registers a process as an agent record (what a harness does at startup). */
export function registerAgent(
  layout: Layout,
  id: string,
  opts: { pid: number | null; pidStartTime: string | null; parentId?: string | null; rootId?: string; depth?: number; status?: AgentStatus },
): AgentRecord {
  const now = new Date().toISOString();
  return createRecord(layout, {
    id,
    name: 'general',
    parentId: opts.parentId ?? null,
    rootId: opts.rootId ?? id,
    depth: opts.depth ?? 0,
    pid: opts.pid,
    pidStartTime: opts.pidStartTime,
    tmux: null,
    cwd: layout.project,
    worktree: null,
    mode: 'headless',
    status: opts.status ?? 'working',
    exitReason: null,
    createdAt: now,
    startedAt: now,
    finishedAt: null,
    turns: 0,
    maxTurns: 20,
    timeoutSecs: 600,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: null },
    lastLine: '',
    model: 'script:test.yaml',
    scripted: true,
    permissionMode: 'default',
    effectivePolicy: { tools: [], permissionMode: 'default', secrets: [] },
    background: false,
    resumedFrom: null,
    spawnedBy: opts.parentId ? 'agent' : 'human',
  });
}
