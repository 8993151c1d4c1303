import { readFileSync } from 'node:fs';

/**
 * NODE_EXTRA_CA_CERTS, kept aside while a Node of ours starts (§14). Node reads the variable's file as it starts and
 * builds its whole certificate store then: ~60 ms of every Node start on a 2-core machine with one certificate in the
 * file, ~100 with a system bundle (docs/benchmarks-starts.md). A command that makes no TLS connection of its own but
 * to a `tls://` bus is started with the variable moved here by its sh (a vendor CLI's shim by its pane,
 * spawn/pane-command.ts; `spawn-agent` and `flotilla send`, `status`, `watch`, `wait`, `inbox`, `spawn` by tools/);
 * it puts the variable back at once for everything it starts (`extraCaCertsBack`), and reads the file itself for the
 * bus.
 */
export const EXTRA_CA_CERTS_ASIDE = 'FLOTILLA_EXTRA_CA_CERTS';

/** At a command's start: NODE_EXTRA_CA_CERTS back in this process's environment, where its sh had kept it aside. */
export function extraCaCertsBack(env: NodeJS.ProcessEnv = process.env): void {
  const file = env[EXTRA_CA_CERTS_ASIDE];
  if (file === undefined) return;
  delete env[EXTRA_CA_CERTS_ASIDE];
  if (file && !env.NODE_EXTRA_CA_CERTS) env.NODE_EXTRA_CA_CERTS = file;
}

/**
 * The certificates this process's Node started without (PEM), for its own TLS: its environment as it started
 * (/proc/self/environ, which a later change to process.env leaves as it was) held them aside and no
 * NODE_EXTRA_CA_CERTS. Undefined when Node loaded them, or there were none.
 */
export function extraCaCertsAside(): string | undefined {
  try {
    const started = readFileSync('/proc/self/environ', 'utf8').split('\0');
    const file = started.find((v) => v.startsWith(`${EXTRA_CA_CERTS_ASIDE}=`))?.slice(EXTRA_CA_CERTS_ASIDE.length + 1);
    if (!file || started.some((v) => v.startsWith('NODE_EXTRA_CA_CERTS='))) return undefined;
    return readFileSync(file, 'utf8');
  } catch {
    // No /proc (the sh keeps nothing aside there), or a file Node could not read either: the default certificates.
    return undefined;
  }
}
