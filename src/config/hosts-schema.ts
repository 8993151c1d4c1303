import { z } from 'zod';
import { CONFIG_REFINEMENTS } from './refinements.js';

/**
 * One remote host of the fleet (docs/design.md §17): where ssh reaches it and how Flotilla is
 * run there. Everything here becomes an ssh command line, so an untrusted project can set
 * none of it (config/trust-filter.ts).
 */

/** A host's name: what `spawn-agent --host`, `doctor --host` and `status` use. `local` is this machine. */
export const HOST_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: 'is not an environment variable name (letters, digits, _)' });

export const hostSchema = z
  .object({
    ssh: z
      .string()
      .regex(/^[^-\s][^\s]*$/, {
        message: 'is not an ssh destination ([user@]host or a Host alias of your ssh config; no spaces, no leading -)',
      })
      .describe('SSH destination: [user@]host, or a Host alias of your ~/.ssh/config'),
    port: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .nullable()
      .default(null)
      .describe("SSH port (null = ssh's own default or your ssh config)"),
    ssh_options: z
      .array(z.string())
      .default([])
      .describe(
        'Extra ssh arguments before the destination, e.g. [-i, ~/.ssh/fleet_ed25519, -o, ProxyJump=bastion]; BatchMode=yes is always added (never a prompt)',
      ),
    flotilla: z
      .string()
      .min(1)
      .default('flotilla')
      .describe('The flotilla command on that host: a path, or a name on its login PATH'),
    root: z
      .string()
      .nullable()
      .default(null)
      .describe('The fleet root on that host (its --root); null = the fleet of the project at cwd there'),
    cwd: z
      .string()
      .nullable()
      .default(null)
      .describe('Working directory of commands on that host (null = the login directory)'),
    env: z
      .record(envName, z.string())
      .default({})
      .describe(
        "Environment set for Flotilla on that host (e.g. PATH, HOME); keep API keys in that host's own environment, never here",
      ),
    connect_timeout_secs: z
      .number()
      .int()
      .positive()
      .default(10)
      .describe('Give up reaching the host after this many seconds (ssh ConnectTimeout)'),
    lost_after_secs: z
      .number()
      .positive()
      .nullable()
      .default(null)
      .describe(
        "Mark this host's live agents 'lost' once its heartbeat is older than this (null = fleet.lost_after_secs)",
      ),
  })
  .strict();

export type HostEntry = z.infer<typeof hostSchema>;

export const hostsSchema = z
  .record(
    z
      .string()
      .regex(HOST_NAME, {
        message: "is not a host name (lowercase letters, digits, - and _, at most 32; 'local' is this machine)",
      })
      .refine(CONFIG_REFINEMENTS.notLocalHost, { message: "is reserved: 'local' is this machine" }),
    hostSchema,
  )
  .default({})
  .describe(
    'Remote hosts agents may open on (spawn-agent --host NAME): name → ssh destination, ssh options, the flotilla command and fleet root there',
  );
