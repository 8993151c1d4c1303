import { homedir } from 'node:os';
import type { Config } from '../../config/schema.js';
import type { AgentRecord } from '../../fleet/record.js';
import type { Layout } from '../../layout/layout.js';
import type { VendorRuntimeName } from '../../runtimes/types.js';
import { decideRead, type ReadScopeDecision } from '../../policy/index.js';
import { resolveToolPath } from '../../tools/tool-paths.js';
import { agentReadScope, realPath, staticBase } from '../read-scope.js';

/**
 * The read scope for a vendor CLI's own read tools (docs/security.md, "What reads may touch"),
 * decided in its pre-tool hook: Claude Code's Read, Glob and Grep, Gemini CLI's read_file,
 * read_many_files, glob, list_directory and grep_search. The same decision as the harness's
 * (policy/read-scope.ts); only the inputs differ, so each CLI's spelling of "which file" and
 * "from which folder" is read here. Codex has no read tool its hooks see (it reads through its
 * shell), so nothing here applies to it.
 */
export function vendorReadDecision(
  call: { tool: string; input?: Record<string, unknown> | undefined },
  rec: Pick<AgentRecord, 'cwd' | 'permissionMode'>,
  layout: Layout,
  config: { permissions: Pick<Config['permissions'], 'read_dirs'>; security: Pick<Config['security'], 'hidden_paths'> },
  env: NodeJS.ProcessEnv,
  /** The CLI asking: its own login is no credential to its own read tools. */
  runtime: VendorRuntimeName,
): ReadScopeDecision | undefined {
  const home = env.HOME ?? homedir();
  const targets = vendorReadTargets(call.tool, call.input ?? {}, rec.cwd, home);
  if (!targets) return undefined;
  const scope = agentReadScope({
    layout,
    cwd: rec.cwd,
    readDirs: config.permissions.read_dirs,
    env,
    hiddenPaths: config.security.hidden_paths,
    runtime,
  });
  return decideRead(targets, scope, rec.permissionMode);
}

/**
 * The files or folders a vendor read call would look at (absolute, symlinks resolved), from
 * its canonical tool and the CLI's own input; undefined for a tool that does not read files.
 */
export function vendorReadTargets(
  tool: string,
  input: Record<string, unknown>,
  cwd: string,
  home: string,
): string[] | undefined {
  if (tool !== 'read' && tool !== 'glob' && tool !== 'grep') return undefined;
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const at = (base: string, p: string) => realPath(resolveToolPath(base, p, home));
  // The folder a search or listing starts from: Claude's `path`, Gemini's `dir_path` (older `path`, `directory`).
  const dir = at(cwd, str(input.dir_path) ?? str(input.path) ?? str(input.directory) ?? '.');
  switch (tool) {
    case 'read': {
      const file = str(input.file_path) ?? str(input.absolute_path) ?? str(input.path);
      // Gemini's read_many_files takes paths or globs, each from the working folder.
      const many = Array.isArray(input.paths)
        ? input.paths.filter((p): p is string => typeof p === 'string' && p.length > 0)
        : [];
      const targets = [...(file ? [at(cwd, file)] : []), ...many.map((p) => at(cwd, staticBase(p)))];
      return targets.length ? targets : [at(cwd, '.')];
    }
    case 'glob': {
      const pattern = str(input.pattern);
      return [pattern ? at(dir, staticBase(pattern)) : dir];
    }
    case 'grep':
      return [dir];
  }
  return undefined;
}
