import { createRecord } from '../../src/fleet/registry.js';
import type { Layout } from '../../src/layout/layout.js';

/** Registers an agent record (no process behind it), enough for addressing. */
export function addAgent(layout: Layout, id: string, lineage: { parentId?: string | null; rootId?: string; depth?: number; status?: 'working' | 'completed' } = {}): void {
  const now = new Date().toISOString();
  createRecord(layout, {
    id,
    name: id.replace(/-[^-]*$/, ''),
    parentId: lineage.parentId ?? null,
    rootId: lineage.rootId ?? id,
    depth: lineage.depth ?? 0,
    pid: null,
    pidStartTime: null,
    tmux: null,
    cwd: layout.project,
    worktree: null,
    mode: 'headless',
    status: lineage.status ?? 'working',
    exitReason: null,
    createdAt: now,
    startedAt: now,
    finishedAt: lineage.status === 'completed' ? now : null,
    turns: 0,
    maxTurns: 20,
    timeoutSecs: 600,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: null },
    lastLine: '',
    model: 'script:test.yaml',
    scripted: true,
    permissionMode: 'default',
    effectivePolicy: { tools: [], permissionMode: 'default', secrets: [] },
    background: true,
    resumedFrom: null,
    spawnedBy: lineage.parentId ? 'agent' : 'human',
  });
}
