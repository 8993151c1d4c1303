import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { traceMark } from '../src/trace.js';

describe('start-up trace marks (bench/runtime-vendors.ts reads them)', () => {
  const saved = process.env.FLOTILLA_TRACE;
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-trace-'));
  afterEach(() => {
    if (saved === undefined) delete process.env.FLOTILLA_TRACE;
    else process.env.FLOTILLA_TRACE = saved;
  });

  it('appends one line per mark, with when this process started, only while FLOTILLA_TRACE names a file', () => {
    const file = join(dir, 'trace.jsonl');
    delete process.env.FLOTILLA_TRACE;
    traceMark('unset');
    expect(existsSync(file)).toBe(false);
    process.env.FLOTILLA_TRACE = file;
    traceMark('a');
    traceMark('b');
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { span: string; t: number; origin: number; pid: number; cpu: number });
    expect(lines.map((l) => l.span)).toEqual(['a', 'b']);
    expect(lines[0]!.pid).toBe(process.pid);
    expect(lines[0]!.origin).toBe(performance.timeOrigin);
    expect(lines[1]!.t).toBeGreaterThanOrEqual(lines[0]!.t);
    // This process's CPU time so far, in ms: never less than it already was.
    expect(lines[0]!.cpu).toBeGreaterThan(0);
    expect(lines[1]!.cpu).toBeGreaterThanOrEqual(lines[0]!.cpu);
    rmSync(dir, { recursive: true, force: true });
  });

  it('never throws when the file cannot be written', () => {
    process.env.FLOTILLA_TRACE = join(dir, 'no', 'such', 'folder', 'trace.jsonl');
    expect(() => traceMark('x')).not.toThrow();
  });
});
