import { describe, expect, it } from 'vitest';
import { OutputCapture } from '../../src/tools/output-capture.js';

describe('OutputCapture', () => {
  it('keeps everything under the cap', () => {
    const c = new OutputCapture(100);
    c.push(Buffer.from('hello '));
    c.push(Buffer.from('world'));
    expect(c.text()).toBe('hello world');
    expect(c.total).toBe(11);
  });

  it('keeps the first and last half of a long stream and counts the rest', () => {
    const c = new OutputCapture(20);
    for (let i = 0; i < 1000; i++) c.push(Buffer.from(`${String(i).padStart(4, '0')}\n`));
    expect(c.total).toBe(5000);
    const text = c.text();
    expect(text.startsWith('0000\n0001\n')).toBe(true);
    expect(text.endsWith('0998\n0999\n')).toBe(true);
    expect(text).toContain('\n[… 4980 bytes of output not kept …]\n');
  });
});
