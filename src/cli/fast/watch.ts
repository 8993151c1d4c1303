import * as watch from '../commands/watch.js';
import { fastRun } from '../fast.js';

/** `flotilla watch` on the fast path: its own bundle, dist/cli/fast-watch.js (tools/build-cli.mjs). */
export const run = (args: string[]): Promise<number> | null => fastRun(watch, args);
