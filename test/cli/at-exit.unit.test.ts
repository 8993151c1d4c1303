import { describe, expect, it } from 'vitest';
import { atExit, runAtExit } from '../../src/at-exit.js';

describe('closers a command registers run once when it is done', () => {
  it('runs each registered closer once, even when another fails', async () => {
    const ran: string[] = [];
    atExit(async () => {
      ran.push('bus');
    });
    atExit(async () => {
      throw new Error('already closed');
    });
    atExit(async () => {
      ran.push('other');
    });
    await runAtExit();
    await runAtExit();
    expect(ran.sort()).toEqual(['bus', 'other']);
  });
});
