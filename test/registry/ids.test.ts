import { describe, expect, it } from 'vitest';
import { newSortableId } from '../../src/fleet/ids.js';

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
});
