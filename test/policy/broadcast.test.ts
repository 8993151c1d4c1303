import { describe, expect, it } from 'vitest';
import { decideBroadcast } from '../../src/policy/broadcast.js';

// Who may broadcast to whom (docs/design.md §4, "Broadcast").
describe('decideBroadcast', () => {
  it('a person may broadcast to any group', () => {
    for (const scope of ['children', 'tree', 'board', 'all'] as const) {
      expect(decideBroadcast({ sender: 'human', scope, board: 'api', onBoard: false, allWho: 'people' })).toEqual({
        decision: 'allow',
        rule: 'person',
      });
    }
  });

  it('an agent may broadcast to its own children and tree', () => {
    expect(decideBroadcast({ sender: 'w-1', scope: 'children', allWho: 'people' }).decision).toBe('allow');
    expect(decideBroadcast({ sender: 'w-1', scope: 'tree', allWho: 'people' }).decision).toBe('allow');
  });

  it('an agent may broadcast to a board only when it has a part in it', () => {
    expect(
      decideBroadcast({ sender: 'w-1', scope: 'board', board: 'api', onBoard: true, allWho: 'people' }).decision,
    ).toBe('allow');
    const no = decideBroadcast({ sender: 'w-1', scope: 'board', board: 'api', onBoard: false, allWho: 'agents' });
    expect(no).toMatchObject({ decision: 'deny', rule: 'board-member' });
    expect(no.decision === 'deny' && no.reason).toContain("w-1 has no part in board 'api'");
  });

  it("an agent may broadcast to all only when inbox.broadcast_all is 'agents'", () => {
    const no = decideBroadcast({ sender: 'w-1', scope: 'all', allWho: 'people' });
    expect(no).toMatchObject({ decision: 'deny', rule: 'inbox.broadcast_all' });
    expect(decideBroadcast({ sender: 'w-1', scope: 'all', allWho: 'agents' })).toEqual({
      decision: 'allow',
      rule: 'inbox.broadcast_all',
    });
  });
});
