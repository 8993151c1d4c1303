import * as review from '../commands/review.js';
import { fastRun } from '../fast.js';

/** `flotilla review` on the fast path: its own bundle, dist/cli/fast-review.js (tools/build-cli.mjs). */
export const run = (args: string[]): Promise<number> | null => fastRun(review, args);
