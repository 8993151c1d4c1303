import type { AgentRecordInput } from '../../src/fleet/record.js';

/** A valid registry record for tests; override what the test is about. */
export function recordInput(id: string, over: Partial<AgentRecordInput> = {}): AgentRecordInput {
  const now = new Date().toISOString();
  return {
    id,
    name: id.replace(/-[a-z0-9]{6}$/, ''),
    parentId: null,
    rootId: id,
    depth: 0,
    pid: null,
    pidStartTime: null,
    tmux: null,
    cwd: '/tmp',
    worktree: null,
    mode: 'oneshot',
    status: 'spawning',
    exitReason: null,
    createdAt: now,
    startedAt: null,
    finishedAt: null,
    turns: 0,
    maxTurns: 20,
    timeoutSecs: 600,
    usage: { inputTokens: 0, outputTokens: 0, costUsd: null },
    lastLine: '',
    model: 'script:test.yaml',
    scripted: true,
    permissionMode: 'default',
    effectivePolicy: { tools: ['shell'], permissionMode: 'default', secrets: [] },
    background: false,
    resumedFrom: null,
    spawnedBy: 'human',
    ...over,
  };
}
