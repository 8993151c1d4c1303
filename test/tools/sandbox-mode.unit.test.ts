import { describe, expect, it } from 'vitest';
import { effectiveSandbox } from '../../src/tools/sandbox-mode.js';

/**
 * docs/security.md, the OS sandbox: `security.sandbox: bubblewrap` on a machine without bwrap
 * is a refusal in one line saying what to do (the harness's start throws it, so no agent runs
 * unsandboxed), while `auto` there falls back to none and says why.
 */
describe('security.sandbox without bwrap on PATH', () => {
  const noBwrap = { PATH: '/nonexistent' };

  it('bubblewrap refuses, saying how to install it or turn the sandbox off', () => {
    expect(() => effectiveSandbox({ security: { sandbox: 'bubblewrap' } } as never, noBwrap)).toThrow(
      "security.sandbox is 'bubblewrap' but bwrap is not installed — install bubblewrap (apt-get install bubblewrap) or set security.sandbox: none",
    );
  });

  it("auto runs without one and says why; none is the person's choice", () => {
    expect(effectiveSandbox({ security: { sandbox: 'auto' } } as never, noBwrap)).toEqual({
      kind: 'none',
      chosen: false,
      why: 'bwrap is not installed',
    });
    expect(effectiveSandbox({ security: { sandbox: 'none' } } as never, noBwrap)).toMatchObject({
      kind: 'none',
      chosen: true,
    });
  });
});
