import { readFileSync } from 'node:fs';

/**
 * NODE_EXTRA_CA_CERTS, kept aside for a vendor CLI's shim (§14). Node reads the variable's file as it starts, and
 * builds its whole certificate store then: ~60 ms of every Node start on a 2-core machine with one certificate in the
 * file, ~100 with a system bundle (docs/benchmarks-starts.md). The shim makes no TLS connection of its own but to a
 * `tls://` bus, so its pane moves the variable here before the shim's Node starts (spawn/pane-command.ts); the shim
 * gives it back to its CLI and all else it starts, and reads the file itself for the bus.
 */
export const EXTRA_CA_CERTS_ASIDE = 'FLOTILLA_EXTRA_CA_CERTS';

/** `env` for what this process starts: NODE_EXTRA_CA_CERTS back where the pane kept it aside. */
export function withExtraCaCertsBack(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const file = env[EXTRA_CA_CERTS_ASIDE];
  if (!file) return env;
  const { [EXTRA_CA_CERTS_ASIDE]: _aside, ...rest } = env;
  return { ...rest, NODE_EXTRA_CA_CERTS: env.NODE_EXTRA_CA_CERTS || file };
}

/** The certificates kept aside (PEM), for this process's own TLS; undefined when none were, or Node loaded them. */
export function extraCaCertsAside(env: NodeJS.ProcessEnv): string | undefined {
  const file = env[EXTRA_CA_CERTS_ASIDE];
  if (!file || env.NODE_EXTRA_CA_CERTS) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // As Node does with a file it cannot read: the default certificates only.
    return undefined;
  }
}
