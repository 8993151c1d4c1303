import { bypassRefusal } from './normalize-permissions.js';
import type { Definition, DefinitionConfig, DefinitionIssue } from './types.js';

/**
 * The built-in `general` definition: used when spawn names none (`agents.default`) and
 * nothing on disk is called that. A project or user file named `general` replaces it.
 * It takes `agents.default_permission_mode` like any file without a mode, so the same
 * bypass_permissions check applies: otherwise an environment variable would be enough.
 */
export function builtinDefinitions(config: DefinitionConfig): { definitions: Definition[]; errors: DefinitionIssue[] } {
  const mode = config.agents.default_permission_mode;
  const refused = mode === 'bypass_permissions' ? bypassRefusal(config, true) : undefined;
  if (refused)
    return {
      definitions: [],
      errors: [{ path: '<builtin>', field: 'permissions.permission_mode', name: 'general', message: refused }],
    };
  const definitions: Definition[] = [
    {
      name: 'general',
      description: 'General-purpose agent for research, code changes and multi-step tasks; has every tool.',
      background: false,
      maxTurns: config.limits.max_turns,
      ...(config.agents.default_memory_scope ? { memory: config.agents.default_memory_scope } : {}),
      tools: { allow: null, deny: [], except: [] },
      permissionMode: mode,
      secrets: [],
      timeoutSecs: config.limits.timeout_secs,
      ttlSecs: 300,
      skills: { include: [], exclude: [] },
      hooks: { PreToolUse: [], PostToolUse: [] },
      body: GENERAL_PROMPT,
      declared: { tools: false, permissionMode: false, maxTurns: false, timeoutSecs: false },
      source: { path: '<builtin>', scope: 'builtin' },
    },
  ];
  return { definitions, errors: [] };
}

const GENERAL_PROMPT = `You are a capable general-purpose software agent working in a real project.

- Understand before you change: read the relevant files and search the code first.
- Make the smallest change that does the job, in the style of the code around it.
- Check your work: run the project's tests or the command that proves the change works.
- When a task splits into independent parts, you may delegate them to child agents and wait for their results.
- Finish with a short, concrete answer: what you did, what you found, and anything left open.`;
