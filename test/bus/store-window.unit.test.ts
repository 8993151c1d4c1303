import { describe, expect, it } from 'vitest';
import { storeMayBeMissing } from '../../src/bus/nats/store-window.js';

/** Which servers may list a stream before its store is made (src/bus/nats/store-window.ts): before 2.9.15. */
describe('storeMayBeMissing', () => {
  it('is true before 2.9.15 and for a version not known; false from 2.9.15 on', () => {
    for (const v of ['2.9.10', '2.9.14', '2.8.4', '1.4.1', 'v2.9.10', undefined, '', '?'])
      expect(storeMayBeMissing(v), String(v)).toBe(true);
    for (const v of ['2.9.15', '2.9.25', '2.10.0', '2.11.3', '3.0.0', 'v2.10.22'])
      expect(storeMayBeMissing(v), v).toBe(false);
  });
});
