import { z } from 'zod';
import { DEFAULT_DENY_COMMANDS } from './deny-commands.js';
import { hostsSchema } from './hosts-schema.js';

export { DEFAULT_DENY_COMMANDS };

/**
 * The one declarative config schema (§2; CONTRIBUTING.md, "A config key"). Validation, `config show`, the JSON
 * schema and the `FLOTILLA_*` environment names are all derived from it. Every key has a
 * default and a description.
 */

const hookCommand = z.object({
  command: z.string().min(1).describe('Shell command run with sh -c'),
  timeout_secs: z
    .number()
    .positive()
    .default(30)
    .describe('Kill the hook (and its process group) after this many seconds'),
});

/** One secret key's source (§11): exactly one of `env` / `command`, or neither for the default variable. */
const secretSourceSchema = z
  .object({
    env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .optional()
      .describe("Environment variable of the approving person's process holding the value"),
    command: z
      .string()
      .min(1)
      .optional()
      .describe("Command run by the approving person's process (sh -c); its stdout is the value"),
    var: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .optional()
      .describe('Variable name shell commands see the granted value as (default: the upper-cased key)'),
  })
  .strict()
  .refine((s) => !(s.env && s.command), { message: 'give env or command, not both' });

/** One vendor CLI's settings (docs/runtimes.md). */
const runtimeSettings = (title: string) =>
  z
    .object({
      command: z
        .string()
        .min(1)
        .nullable()
        .default(null)
        .describe(
          `Path of the ${title} CLI to run; null = PATH, then the project's node_modules/.bin, then the CLIs installed beside Flotilla`,
        ),
      login: z
        .enum(['shared', 'isolated'])
        .default('shared')
        .describe(
          `'shared': agents use the person's own ${title} login by reference (docs/runtimes.md lists the files read); 'isolated': only keys in the environment, or a login typed into the agent's window`,
        ),
    })
    .strict()
    .prefault({})
    .describe(title);

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
    security: z
      .object({
        deny_commands: z
          .array(z.string())
          .default([...DEFAULT_DENY_COMMANDS])
          .describe('Shell gate deny list, matched per simple command'),
        opaque_commands: z
          .enum(['ask', 'deny', 'allow'])
          .optional()
          .describe(
            "What a shell command the gate cannot decide statically (eval of a variable, text piped to a shell, inline interpreter code, find -exec…) means: 'ask' a person, 'deny' it, or 'allow' it like any command. Unset: the permission mode decides (default/accept_edits ask, dont_ask runs it and audits it as opaque; nobody to ask → deny)",
          ),
        sandbox: z
          .enum(['auto', 'none', 'bubblewrap'])
          .default('auto')
          .describe(
            "OS sandbox for shell commands: 'auto' is bubblewrap where it works here, else none with a warning",
          ),
        sandbox_network: z.boolean().default(false).describe('Allow network inside the sandbox'),
        hidden_paths: z
          .array(z.string())
          .default([])
          .describe(
            "More of the person's paths no sandboxed command or vendor CLI sees, beside the credentials always hidden (~/.ssh, ~/.aws, …; docs/security.md). '~/' is the home. Only the person's own config sets it",
          ),
        secrets: z
          .record(z.string(), secretSourceSchema)
          .default({})
          .describe(
            "Per secret key: where the approving person's process reads the value ({env: NAME} or {command: '…'}, default the variable of the upper-cased key) and the variable shell commands see it as (var)",
          ),
      })
      .prefault({})
      .describe('Shell gate and sandbox'),
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
    hooks: z
      .object({
        start: z.array(hookCommand).default([]).describe('Commands run when any agent starts'),
        stop: z.array(hookCommand).default([]).describe('Commands run once when any agent reaches a terminal state'),
        task_created: z
          .array(hookCommand)
          .default([])
          .describe('TaskCreated: commands run when a task is added to a board'),
        task_completed: z
          .array(hookCommand)
          .default([])
          .describe(
            'TaskCompleted: commands run before a task is marked done; exit 2 refuses it and stderr goes back to the claimant',
          ),
        teammate_idle: z
          .array(hookCommand)
          .default([])
          .describe(
            'TeammateIdle: commands run when a persistent agent goes idle; exit 2 sends stderr back to it as mail, so it keeps working',
          ),
      })
      .prefault({})
      .describe('Config-level lifecycle hooks'),
    runtimes: z
      .object({
        claude: runtimeSettings('Claude Code'),
        codex: runtimeSettings('Codex'),
        gemini: runtimeSettings('Gemini CLI'),
      })
      .strict()
      .prefault({})
      .describe('Vendor CLIs run as agents (--runtime)'),
    fleet: z
      .object({
        bus: z
          .string()
          .regex(
            /^(maildir|(nats|tls):\/\/[^\s/]+)$/,
            "expected 'maildir' or nats://host:port (tls://host:port for TLS)",
          )
          .default('maildir')
          .describe(
            "Where mail travels: 'maildir' (one machine) or a NATS JetStream server, nats://host:port (docs/scale-out.md)",
          ),
        name: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,64}$/)
          .nullable()
          .default(null)
          .describe(
            "The fleet's name on the bus (subjects and streams are named by it); null = derived from the fleet root, which only one machine shares",
          ),
        host: z
          .string()
          .regex(/^[a-z0-9_-]{1,64}$/, 'expected a host name: lowercase letters, digits, - and _')
          .nullable()
          .default(null)
          .describe(
            "This machine's name in the fleet (status groups agents by it); null = $FLOTILLA_HOST, else the hostname",
          ),
        lost_after_secs: z
          .number()
          .positive()
          .default(30)
          .describe(
            "A host whose heartbeat is older than this has its live agents marked 'lost' (hosts.NAME.lost_after_secs overrides it per host)",
          ),
        audit_max_age_secs: z
          .number()
          .int()
          .nonnegative()
          .default(2_592_000)
          .describe(
            "On a nats:// bus, the fleet's audit stream drops lines older than this (default 30 days; 0 = keep every line); each host's state/audit.jsonl keeps them all. Set it alike on every host: the stream takes the setting of the last process that opened it",
          ),
        nats: z
          .object({
            token_env: z.string().default('FLOTILLA_NATS_TOKEN').describe('Environment variable holding a NATS token'),
            user_env: z
              .string()
              .default('FLOTILLA_NATS_USER')
              .describe('Environment variable holding a NATS user name'),
            password_env: z
              .string()
              .default('FLOTILLA_NATS_PASSWORD')
              .describe("Environment variable holding that user's password"),
            ca_file: z
              .string()
              .nullable()
              .default(null)
              .describe("CA certificate (PEM) that signed the server's TLS certificate, for tls:// buses"),
          })
          .prefault({})
          .describe('NATS credentials: read from the environment, never written into the fleet root'),
      })
      .prefault({})
      .describe('The fleet across machines'),
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
