import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { decideRead, type PermissionMode, type ReadScope, type ReadScopeDecision } from '../policy/index.js';
import { canonicalToolName } from '../policy/tool-names.js';
import type { VendorRuntimeName } from '../runtimes/types.js';
import { credentialPaths } from '../tools/sandbox-credentials.js';
import { resolveToolPath } from '../tools/tool-paths.js';

/**
 * The read scope of one agent (docs/security.md, "What reads may touch"): the folders its
 * `read`, `glob` and `grep` use freely, the credentials none may touch, and, per call, the
 * paths the call would look at with symlinks resolved — so a link inside the project that
 * points at `~/.ssh` is `~/.ssh`. The credentials are the sandbox's own list
 * (tools/sandbox-credentials.ts, with `security.hidden_paths`), less a vendor CLI's own login
 * for that CLI's read tools, plus the fleet's secrets. The decision itself is policy's
 * (policy/read-scope.ts).
 */
export function agentReadScope(opts: {
  layout: Layout;
  cwd: string;
  memoryDir?: string | undefined;
  readDirs: readonly string[];
  env: NodeJS.ProcessEnv;
  /** `security.hidden_paths`: the person's own additions. */
  hiddenPaths?: readonly string[];
  /** The vendor CLI whose read tools these are (none: Flotilla's harness). */
  runtime?: VendorRuntimeName;
}): ReadScope {
  const home = opts.env.HOME ?? homedir();
  const dirs = (paths: readonly string[]) => [...new Set(paths.flatMap((p) => [resolve(p), realPath(p)]))];
  const creds = credentialPaths({ home, env: opts.env, extra: opts.hiddenPaths, runtime: opts.runtime });
  return {
    inside: dirs([
      opts.layout.project,
      opts.layout.worktreesDir,
      opts.cwd,
      ...(opts.memoryDir ? [opts.memoryDir] : []),
      ...opts.readDirs.map((d) => resolveToolPath(opts.layout.project, d, home)),
    ]),
    credentials: dirs([...creds.hidden, opts.layout.secretsDir]),
  };
}

/**
 * The files or folders a `read`, `glob` or `grep` call would look at (absolute, symlinks resolved); undefined for any
 * other tool.
 */
export function readTargets(tool: string, input: unknown, cwd: string, home: string | undefined): string[] | undefined {
  const i = (input ?? {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  switch (canonicalToolName(tool)) {
    case 'read':
      return [realPath(resolveToolPath(cwd, str(i.path) ?? '.', home))];
    case 'grep':
      return [realPath(resolveToolPath(cwd, str(i.path) ?? '.', home))];
    case 'glob':
      return [realPath(resolveToolPath(cwd, staticBase(str(i.pattern) ?? '.'), home))];
    default:
      return undefined;
  }
}

/** The part of a glob before its first wildcard segment: `../x/**` → `../x`, `*.ts` → `.`. */
export function staticBase(pattern: string): string {
  const parts = pattern.split('/');
  const fixed: string[] = [];
  for (const p of parts) {
    if (/[*?[\]{}!()]/.test(p)) break;
    fixed.push(p);
  }
  if (fixed.length === parts.length) fixed.pop(); // the last segment names files, not a folder
  const base = fixed.join('/');
  return base === '' ? (pattern.startsWith('/') ? '/' : '.') : base;
}

/** `path` with symlinks resolved, through its nearest existing ancestor when it does not exist. */
export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realPath(parent), basename(path));
  }
}

/** The read-scope check the gate runs on each call: undefined for a tool that does not read files. */
export function readScopeCheck(
  scope: ReadScope,
  mode: PermissionMode,
  cwd: string,
  home: string | undefined,
): (tool: string, input: unknown) => ReadScopeDecision | undefined {
  return (tool, input) => {
    const targets = readTargets(tool, input, cwd, home);
    return targets ? decideRead(targets, scope, mode) : undefined;
  };
}
