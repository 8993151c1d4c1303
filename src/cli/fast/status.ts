import * as status from '../commands/status.js';
import { fastRun } from '../fast.js';

/** `flotilla status` / `ls` on the fast path: its own bundle, dist/cli/fast-status.js (tools/build-cli.mjs). */
export const run = (args: string[]): Promise<number> | null => fastRun(status, args);
