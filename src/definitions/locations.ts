import { join } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { userPaths } from '../layout/layout.js';
import type { DefinitionScope } from './types.js';

/**
 * Where definitions live, first wins on a name clash (§7): the project's `.flotilla/agents/`,
 * the project's `.claude/agents/` (read for compatibility), the user's
 * `$XDG_CONFIG_HOME/flotilla/agents/`, then `~/.claude/agents/`.
 */
export function definitionDirs(
  layout: Pick<Layout, 'agentsDir' | 'project'>,
  env: NodeJS.ProcessEnv = process.env,
): { dir: string; scope: DefinitionScope }[] {
  const user = userPaths(env);
  return [
    { dir: layout.agentsDir, scope: 'project' },
    { dir: join(layout.project, '.claude', 'agents'), scope: 'claude-project' },
    { dir: user.agentsDir, scope: 'user' },
    { dir: user.claudeAgentsDir, scope: 'claude-user' },
  ];
}
