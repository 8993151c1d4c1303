import * as send from '../commands/send.js';
import { fastRun } from '../fast.js';

/** `flotilla send` on the fast path: its own bundle, dist/cli/fast-send.js (tools/build-cli.mjs). */
export const run = (args: string[]): Promise<number> | null => fastRun(send, args);
