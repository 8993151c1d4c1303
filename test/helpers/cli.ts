import { execa, type Options, type Result } from 'execa';
import { fileURLToPath } from 'node:url';

/** The built CLI (npm test builds before running vitest). */
export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
export const SPAWN_AGENT = fileURLToPath(new URL('../../tools/spawn-agent', import.meta.url));

/** Runs `flotilla <args>` as a real process; never throws on a non-zero exit. */
export function flotilla(args: string[], opts: Options = {}): Promise<Result> {
  return execa(process.execPath, [CLI, ...args], { reject: false, ...opts }) as Promise<Result>;
}
