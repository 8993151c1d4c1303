import { execa } from 'execa';
import { join } from 'node:path';
import { TOOLS_DIR } from '../../src/layout/package.js';
import { requireTool } from './requires.js';

/**
 * One of the door's perl clients (tools/door-hook, tools/door-pipe) as a vendor CLI runs it:
 * `perl tools/<tool> <first> <node> <cli>` from `cwd`, `input` on stdin, FLOTILLA_DOOR set to `door` (none when
 * undefined), nothing else of this process's environment but PATH. `fallback` stands for `<node> <cli>`, which runs
 * when perl cannot reach a door.
 */
export function doorClient(
  tool: 'door-hook' | 'door-pipe',
  first: string,
  opts: { cwd: string; door: string | undefined; input: string; fallback?: string[] },
) {
  return execa(
    requireTool('perl'),
    [join(TOOLS_DIR, tool), first, ...(opts.fallback ?? ['/nonexistent-node', '/x.js'])],
    {
      input: opts.input,
      cwd: opts.cwd,
      reject: false,
      stripFinalNewline: false,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...(opts.door ? { FLOTILLA_DOOR: opts.door } : {}) },
      extendEnv: false,
    },
  );
}
