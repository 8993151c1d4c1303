import { isAbsolute, relative, resolve } from 'node:path';

/** How tools turn a model's path into an absolute one and back into something short to show. */

/** Resolves `path` against the agent's working directory; `~/` means the home directory. */
export function resolveToolPath(cwd: string, path: string, home = process.env.HOME): string {
  if (home && (path === '~' || path.startsWith('~/'))) return resolve(home, path.slice(2));
  return resolve(cwd, path);
}

/** `path` relative to `cwd` when it is inside it, else absolute: what the model should see. */
export function displayPath(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  if (rel === '') return '.';
  if (rel.startsWith('..') || isAbsolute(rel)) return path;
  return rel;
}

/** Never listed by glob or searched by grep: dependency trees and git internals drown every other result. */
export const SEARCH_IGNORE = ['**/node_modules/**', '**/.git/**'] as const;
