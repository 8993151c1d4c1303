import { z } from 'zod';
import { DEFAULT_DENY_COMMANDS } from './deny-commands.js';
import { fleetSchema } from './fleet-schema.js';
import { hooksSchema } from './hooks-schema.js';
import { hostsSchema } from './hosts-schema.js';
import { runtimesSchema } from './runtimes-schema.js';
import { securitySchema } from './security-schema.js';

export { DEFAULT_DENY_COMMANDS };

/**
 * The one declarative config schema (§2; CONTRIBUTING.md, "A config key"). Validation, `config show`, the JSON
 * schema and the `FLOTILLA_*` environment names are all derived from it. Every key has a
 * default and a description.
 */

export const configSchema = z
  .object({
    model: z
      .string()
      .nullable()
      .default(null)
      .describe(
        'Default model as provider:model-id (e.g. anthropic:claude-sonnet-4-5); null = pick by API keys, else the scripted demo model',
      ),
    models: z
      .object({
        aliases: z
          .record(z.string(), z.string())
          .default({
            sonnet: 'anthropic:claude-sonnet-4-5',
            opus: 'anthropic:claude-opus-4-1',
            haiku: 'anthropic:claude-haiku-4-5',
          })
          .describe("Claude-style model aliases used by definitions ('inherit' means the parent's model)"),
        providers: z
          .record(
            z.string(),
            z.object({
              base_url: z.string().describe('OpenAI-compatible base URL, e.g. http://localhost:11434/v1'),
              api_key_env: z.string().optional().describe('Environment variable holding the API key'),
            }),
          )
          .default({})
          .describe('Named OpenAI-compatible servers, used as openai-compatible:<name>/<model>'),
        prices: z
          .record(
            z.string(),
            z.object({ input_per_mtok: z.number().nonnegative(), output_per_mtok: z.number().nonnegative() }),
          )
          .default({})
          .describe('USD per million tokens by model string, for cost accounting and budget.max_cost_usd_per_tree'),
        max_retries: z
          .number()
          .int()
          .nonnegative()
          .default(3)
          .describe('Retries with backoff for HTTP 429/5xx model errors'),
      })
      .prefault({})
      .describe('Model providers, aliases and prices'),
    limits: z
      .object({
        max_depth: z
          .number()
          .int()
          .nonnegative()
          .default(3)
          .describe('Deepest spawn depth allowed (a root is depth 0)'),
        max_running: z.number().int().positive().default(8).describe('Live agents allowed in the whole fleet'),
        max_children: z.number().int().nonnegative().default(4).describe('Live children allowed per parent'),
        max_spawns_per_tree: z.number().int().positive().default(32).describe('Total spawns allowed in one tree, ever'),
        max_turns: z
          .number()
          .int()
          .positive()
          .default(20)
          .describe('Model turns per task unless the definition says otherwise'),
        timeout_secs: z.number().positive().default(600).describe('Wall-clock limit of one task'),
        idle_timeout_secs: z
          .number()
          .nonnegative()
          .default(0)
          .describe(
            'A persistent agent exits after this long idle; 0 (the default) = never, so an agent in a window stays usable',
          ),
        cancel_grace_secs: z
          .number()
          .nonnegative()
          .default(5)
          .describe('Seconds between SIGTERM and SIGKILL on cancel'),
      })
      .prefault({})
      .describe('Spawn and run limits'),
    budget: z
      .object({
        max_tokens_per_tree: z
          .number()
          .int()
          .positive()
          .nullable()
          .default(null)
          .describe('Token budget shared by a root and all its descendants (null = unlimited)'),
        max_cost_usd_per_tree: z
          .number()
          .positive()
          .nullable()
          .default(null)
          .describe('USD budget shared by a tree, priced by models.prices (null = unlimited)'),
      })
      .prefault({})
      .describe('Budgets per tree'),
    tmux: z
      .object({
        socket: z
          .string()
          .nullable()
          .default(null)
          .describe('tmux server socket name (tmux -L); null = the default server'),
        session_prefix: z.string().default('flotilla').describe('Fleet session name prefix: <prefix>-<project-slug>'),
      })
      .prefault({})
      .describe('tmux'),
    watch: z
      .object({
        bell: z
          .boolean()
          .default(true)
          .describe(
            "Ring the terminal bell when an agent newly needs a person (an approval, mail for you, a failure, a place in line); tmux marks the dashboard's window and passes the bell to your terminal",
          ),
      })
      .prefault({})
      .describe('The dashboard (flotilla watch)'),
    agents: z
      .object({
        default_disallowed_tools: z
          .array(z.string())
          .default([])
          .describe('Tools no agent gets, whatever its definition says'),
        default_permission_mode: z
          .enum(['plan', 'default', 'accept_edits', 'dont_ask', 'bypass_permissions'])
          .default('default')
          .describe('Permission mode of a definition that names none'),
        allow_bypass_permissions: z
          .boolean()
          .default(false)
          .describe('Allow definitions with permission_mode bypass_permissions to load'),
        approval_timeout_secs: z
          .number()
          .positive()
          .default(300)
          .describe('An approval nobody answers within this many seconds is denied'),
        default_memory_scope: z
          .enum(['user', 'project', 'local'])
          .nullable()
          .default(null)
          .describe('Memory scope of a definition that names none (null = no memory)'),
        context_window_turns: z
          .number()
          .int()
          .nonnegative()
          .default(6)
          .describe('Parent turns passed to a child with --context'),
        default: z.string().default('general').describe('Definition used when spawn names none'),
      })
      .prefault({})
      .describe('Agent defaults and policy'),
    permissions: z
      .object({
        read_dirs: z
          .array(z.string())
          .default([])
          .describe(
            "Folders outside the project that agents' read, glob and grep use without asking (~/ is your home; relative to the project)",
          ),
      })
      .prefault({})
      .describe('Where agents may read without asking (docs/security.md)'),
    security: securitySchema,
    tools: z
      .object({
        shell_timeout_secs: z.number().positive().default(120).describe('Default timeout of one shell command'),
        max_output_bytes: z
          .number()
          .int()
          .positive()
          .default(30_000)
          .describe('Tool output shown to the model, head and tail kept'),
      })
      .prefault({})
      .describe('Built-in tools'),
    transcripts: z
      .object({
        enabled: z.boolean().default(true).describe('Write transcripts (resume needs them)'),
        max_files: z.number().int().nonnegative().default(50).describe('Finished transcripts kept (0 = unlimited)'),
      })
      .prefault({})
      .describe('Transcripts'),
    output: z
      .object({
        max_bytes: z.number().int().positive().default(1_048_576).describe('Cap of each final answer file'),
        retention_secs: z
          .number()
          .nonnegative()
          .default(0)
          .describe('Delete finished outputs older than this (0 = keep)'),
      })
      .prefault({})
      .describe('Final answers'),
    hooks: hooksSchema,
    runtimes: runtimesSchema,
    fleet: fleetSchema,
    inbox: z
      .object({
        rescan_secs: z
          .number()
          .positive()
          .default(30)
          .describe('Rescan new/ this often to catch events the kernel dropped'),
        poll: z
          .enum(['auto', 'always'])
          .default('auto')
          .describe("'always' polls instead of inotify (network filesystems)"),
        poll_interval_ms: z.number().int().positive().default(100).describe('Polling interval when polling'),
        max_body_bytes: z.number().int().positive().default(1_048_576).describe('Largest message body'),
        broadcast_all: z
          .enum(['people', 'agents'])
          .default('people')
          .describe("Who may broadcast to every agent (send --to all): 'people' only, or agents too"),
      })
      .prefault({})
      .describe('Inbox'),
    hosts: hostsSchema,
  })
  .strict();

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;

/** The defaults alone. */
export function defaultConfig(): Config {
  return configSchema.parse({});
}
