import { describe, expect, it } from 'vitest';
import { sleep } from '../src/sleep.js';

describe('the one sleep', () => {
  it('ends early, without throwing, when its signal aborts', async () => {
    const controller = new AbortController();
    const slept = sleep(60_000, controller.signal);
    controller.abort();
    await expect(slept).resolves.toBeUndefined();
    await expect(sleep(60_000, AbortSignal.abort())).resolves.toBeUndefined();
  });
});
