import { describe, expect, it } from 'vitest';
import { conflictIn, covers, placeLease, releaseIn } from '../../src/leases/decide.js';
import { emptyLeaseFile } from '../../src/leases/lease.js';

/** The lease decisions both stores share (files and the bus's bucket, docs/design.md §16). */
describe('lease decisions', () => {
  it('a renewed lease keeps its first take time; another holder overlapping is the conflict, one own is not', () => {
    const file = emptyLeaseFile('/repo');
    const ask = { path: 'src', holder: 'a', why: 'refactor', ttlMs: null, task: null };
    const first = placeLease(file, ask, Date.parse('2026-01-01T00:00:00Z'));
    expect(first.fresh).toBe(true);
    const again = placeLease(file, { ...ask, ttlMs: 60_000 }, Date.parse('2026-01-01T01:00:00Z'));
    expect(again).toMatchObject({ fresh: false, lease: { taken_at: '2026-01-01T00:00:00.000Z' } });
    expect(again.lease.expires_at).toBe('2026-01-01T01:01:00.000Z');
    expect(file.leases).toHaveLength(1);
    expect(conflictIn(file, 'src/app.ts', 'a')).toBeUndefined();
    expect(conflictIn(file, 'src/app.ts', 'b')?.holder).toBe('a');
    expect(conflictIn(file, 'docs/x.md', 'b')).toBeUndefined();
  });

  it('a lease covers itself, what is under a folder, and what a glob matches', () => {
    expect(covers('src', 'src/a/b.ts')).toBe(true);
    expect(covers('src', 'srcx/a.ts')).toBe(false);
    expect(covers('docs/**/*.md', 'docs/a/b.md')).toBe(true);
    expect(covers('docs/**/*.md', 'docs/a/b.ts')).toBe(false);
    expect(covers('', 'anything')).toBe(true);
  });
});

describe('lease release decisions', () => {
  it("a holder gives back its own lease; another's, or one nobody holds, is refused with what to do", () => {
    const file = emptyLeaseFile('/repo');
    placeLease(file, { path: 'src', holder: 'a', why: 'x', ttlMs: null, task: null }, 0);
    expect(() => releaseIn(file, 'docs', 'a')).toThrow(/nobody holds a lease on docs/);
    expect(() => releaseIn(file, 'src', 'b')).toThrow(/is a's — only its holder or a person/);
    expect(releaseIn(file, 'src', 'a').map((l) => l.holder)).toEqual(['a']);
    expect(file.leases).toEqual([]);
  });
});
