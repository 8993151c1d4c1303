import { z } from 'zod';
import { DEFAULT_DENY_COMMANDS } from './deny-commands.js';
import { CONFIG_REFINEMENTS } from './refinements.js';

/**
 * The config's `security` section (docs/security.md): the shell gate, the OS sandbox and where secrets come from (§11).
 */

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
  .refine(CONFIG_REFINEMENTS.oneSecretSource, { message: 'give env or command, not both' });

export const securitySchema = z
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
      .describe("OS sandbox for shell commands: 'auto' is bubblewrap where it works here, else none with a warning"),
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
  .describe('Shell gate and sandbox');
