import { describe, expect, it } from 'vitest';
import { newAgentId, newSortableId } from '../../src/fleet/ids.js';

describe('sortable ids', () => {
  it('sort in the order they were made, even within one millisecond', () => {
    const ids = Array.from({ length: 2000 }, () => newSortableId(1_800_000_000_000));
    expect(new Set(ids).size).toBe(2000);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^[0-9a-z]{19}$/);
  });

  it('ids sort by the time they carry', () => {
    const a = newSortableId(1_900_000_000_000);
    const b = newSortableId(1_900_000_000_001);
    const earlier = newSortableId(1_899_999_999_000);
    expect([a, b, earlier].sort()).toEqual([earlier, a, b]);
  });

  it('agent ids end in six random base-36 characters, every one of the 36 in use', () => {
    const ids = Array.from({ length: 2000 }, () => newAgentId('reviewer'));
    for (const id of ids) expect(id).toMatch(/^reviewer-[0-9a-z]{6}$/);
    expect(new Set(ids).size).toBe(2000);
    const seen = new Set(ids.flatMap((id) => [...id.slice(-6)]));
    expect(seen.size).toBe(36);
  });
});
