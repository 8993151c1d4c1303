import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { decodeLineage, encodeLineage, keepLineage, remoteLineage, treeLimits } from '../../src/hosts/lineage.js';
import { createRecord } from '../../src/fleet/registry.js';
import { tempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

/** A child's lineage sent to another host (docs/design.md §17.5): what it carries and what it refuses. */
describe('remote lineage', () => {
  const config = defaultConfig();

  it('carries the parent record, its host and the tree limits, and is kept beside the child', () => {
    const f = tempFleet();
    try {
      const parent = createRecord(f.layout, recordInput('lead-1', { depth: 1, rootId: 'root-1', parentId: 'root-1' }));
      const text = encodeLineage('gpu1', parent, { ...config.limits, max_depth: 2 });
      const l = decodeLineage(text);
      expect(l).toMatchObject({
        v: 1,
        host: 'gpu1',
        parent: { id: 'lead-1', depth: 1, rootId: 'root-1' },
        limits: { max_depth: 2, max_children: 4, max_spawns_per_tree: 32 },
      });
      expect(remoteLineage(f.layout, 'kid-1')).toBeUndefined();
      keepLineage(f.layout, 'kid-1', l);
      expect(remoteLineage(f.layout, 'kid-1')).toEqual(l);
    } finally {
      f.cleanup();
    }
  });

  it("applies the stricter of both hosts' limits", () => {
    const f = tempFleet();
    const l = decodeLineage(
      encodeLineage('a', createRecord(f.layout, recordInput('p')), {
        ...config.limits,
        max_depth: 1,
        max_children: 9,
        max_spawns_per_tree: 5,
      }),
    );
    expect(treeLimits({ ...config.limits, max_depth: 3, max_children: 4, max_spawns_per_tree: 32 }, l)).toMatchObject({
      max_depth: 1,
      max_children: 4,
      max_spawns_per_tree: 5,
    });
    f.cleanup();
  });

  it('refuses what Flotilla did not write, as a usage error (never a root spawn)', () => {
    const f = tempFleet();
    const good = JSON.parse(encodeLineage('a', createRecord(f.layout, recordInput('p')), config.limits)) as Record<
      string,
      unknown
    >;
    const cases: [string, RegExp][] = [
      ['not json', /--lineage is not JSON/],
      [JSON.stringify({ ...good, v: 2 }), /not a lineage of this version/],
      [JSON.stringify({ ...good, host: 'Bad Host' }), /not a lineage of this version/],
      [JSON.stringify({ ...good, parent: { id: 'p' } }), /missing the parent's record/],
      [JSON.stringify({ ...good, limits: { max_depth: -1 } }), /missing the tree's limits/],
    ];
    for (const [text, why] of cases) {
      expect(() => decodeLineage(text)).toThrow(why);
      try {
        decodeLineage(text);
      } catch (err) {
        expect((err as { exitCode: number }).exitCode).toBe(2);
      }
    }
    f.cleanup();
  });
});
