import { z } from 'zod';

/**
 * The config's `fleet` section (docs/scale-out.md): the bus mail travels on, the fleet's and this machine's names, NATS
 * credentials.
 */

export const fleetSchema = z
  .object({
    bus: z
      .string()
      .regex(/^(maildir|(nats|tls):\/\/[^\s/]+)$/, "expected 'maildir' or nats://host:port (tls://host:port for TLS)")
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
        user_env: z.string().default('FLOTILLA_NATS_USER').describe('Environment variable holding a NATS user name'),
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
  .describe('The fleet across machines');
