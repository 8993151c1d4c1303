import { describe, expect, it } from 'vitest';
import { asLost, lostTask } from '../../src/bus/nats/lost.js';
import { canTransition, isTerminal, statusWithReason } from '../../src/fleet/record-status.js';
import { parseAgentRecord } from '../../src/fleet/record-validate.generated.js';
import { agentRecordSchema } from '../../src/fleet/record-schema.js';
import { lostReason } from '../../src/lifecycle/lost.js';
import { recordInput } from '../helpers/records.js';

/** The `lost` status (docs/design.md §3, §17.8): terminal, valid in both validators, and the task it ends. */
describe('lost', () => {
  const rec = agentRecordSchema.parse(
    recordInput('farworker-abc123', {
      status: 'working',
      host: 'r1',
      parentId: 'parent-xyz789',
      rootId: 'parent-xyz789',
      depth: 1,
      task: 2,
    }),
  );

  it('is terminal: no way out of it, and every live state may end in it', () => {
    expect(isTerminal('lost')).toBe(true);
    for (const s of ['working', 'idle', 'waiting_approval', 'queued', 'starting'] as const)
      expect(canTransition(s, 'lost')).toBe(true);
    for (const s of ['working', 'completed', 'cancelled'] as const) expect(canTransition('lost', s)).toBe(false);
  });

  it('reads as a person expects in status and wait', () => {
    const reason = lostReason({ host: 'r1', ageMs: 34_400 });
    expect(reason).toBe('host r1: no heartbeat for 34 s');
    expect(statusWithReason('lost', reason)).toBe('lost (host r1: no heartbeat for 34 s)');
  });

  it('ends the open task, and is a record both the generated validator and zod accept', () => {
    const lost = asLost(rec, 'host r1: no heartbeat for 5 s', new Date('2026-01-02T03:04:05Z'));
    expect(lost).toMatchObject({
      status: 'lost',
      exitReason: 'host r1: no heartbeat for 5 s',
      finishedAt: '2026-01-02T03:04:05.000Z',
      task: 2,
    });
    expect(lost.lastTask).toEqual({
      task: 2,
      status: 'lost',
      exitReason: 'host r1: no heartbeat for 5 s',
      finishedAt: '2026-01-02T03:04:05.000Z',
      outputPath: null,
    });
    const parsed = parseAgentRecord(JSON.parse(JSON.stringify(lost)));
    expect(parsed.success).toBe(true);
    expect(agentRecordSchema.safeParse(lost).success).toBe(true);
  });

  it("of an agent idle after answering its task, ends the next: the parent's completion of the answered one is never doubled", () => {
    const idle = {
      ...rec,
      status: 'idle' as const,
      lastTask: {
        task: 2,
        status: 'completed' as const,
        exitReason: null,
        finishedAt: rec.createdAt,
        outputPath: null,
      },
    };
    expect(lostTask(idle)).toBe(3);
    expect(asLost(idle, 'x').lastTask?.task).toBe(3);
    expect(lostTask(rec)).toBe(2);
  });
});
