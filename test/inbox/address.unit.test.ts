import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveRecipient, senderIdentity } from '../../src/inbox/address.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { addAgent } from './helpers.js';

describe('addressing', () => {
  let f: TempFleet;
  beforeEach(() => {
    f = tempFleet();
    addAgent(f.layout, 'lead-3kd9p1');
    addAgent(f.layout, 'worker-7k2m9q', { parentId: 'lead-3kd9p1', rootId: 'lead-3kd9p1', depth: 1 });
    addAgent(f.layout, 'worker-7kaaaa', {
      parentId: 'lead-3kd9p1',
      rootId: 'lead-3kd9p1',
      depth: 1,
      status: 'completed',
    });
    addAgent(f.layout, 'sub-9x8y7z', { parentId: 'worker-7k2m9q', rootId: 'lead-3kd9p1', depth: 2 });
  });
  afterEach(() => f.cleanup());

  it('resolves ids, unique prefixes and human; finished agents are still valid recipients', () => {
    expect(resolveRecipient(f.layout, 'lead-3kd9p1', 'human')).toBe('lead-3kd9p1');
    expect(resolveRecipient(f.layout, 'lead', 'human')).toBe('lead-3kd9p1');
    expect(resolveRecipient(f.layout, 'worker-7ka', 'human')).toBe('worker-7kaaaa');
    expect(resolveRecipient(f.layout, 'human', 'sub-9x8y7z')).toBe('human');
  });

  it('resolves parent and root from the sender record; the parent of a root is human', () => {
    expect(resolveRecipient(f.layout, 'parent', 'sub-9x8y7z')).toBe('worker-7k2m9q');
    expect(resolveRecipient(f.layout, 'root', 'sub-9x8y7z')).toBe('lead-3kd9p1');
    expect(resolveRecipient(f.layout, 'parent', 'lead-3kd9p1')).toBe('human');
    expect(resolveRecipient(f.layout, 'root', 'lead-3kd9p1')).toBe('lead-3kd9p1');
  });

  it('errors for unknown, ambiguous and meaningless recipients', () => {
    expect(() => resolveRecipient(f.layout, 'zz', 'human')).toThrow(/^unknown recipient 'zz'.*flotilla status/);
    expect(() => resolveRecipient(f.layout, 'worker-7k', 'human')).toThrow(
      /matches 2 agents: worker-7k2m9q, worker-7kaaaa/,
    );
    expect(() => resolveRecipient(f.layout, 'parent', 'human')).toThrow(/a person sending from a shell has none/);
    expect(() => resolveRecipient(f.layout, 'root', 'ghost-000000')).toThrow(/has no registry record/);
  });

  it('takes the sender from ancestry: human here; a hint naming a non-ancestor is forged; a malformed one is refused', () => {
    expect(senderIdentity(f.layout, { env: {} })).toBe('human');
    expect(senderIdentity(f.layout, { env: { FLOTILLA_AGENT_ID: '' } })).toBe('human');
    expect(() => senderIdentity(f.layout, { env: { FLOTILLA_AGENT_ID: 'worker-7k2m9q' } })).toThrow(
      /names 'worker-7k2m9q', but this process belongs to a person/,
    );
    expect(() => senderIdentity(f.layout, { env: { FLOTILLA_AGENT_ID: '../lead' } })).toThrow(/not a valid agent id/);
  });
});
