import { AGENT_IDENTITY_VARS } from '../fleet/agent-env.js';
import { shellCommand } from '../tmux/quote.js';
import { EXTRA_CA_CERTS_ASIDE } from '../extra-ca-certs.js';
import { HARNESS_MALLOC_TUNABLES } from '../malloc-tunables.js';

/** NODE_EXTRA_CA_CERTS aside, for a vendor CLI's shim (src/extra-ca-certs.ts). */
const CA_CERTS_ASIDE = `[ -z "\${NODE_EXTRA_CA_CERTS-}" ] || [ ! -r /proc/self/environ ] || { ${EXTRA_CA_CERTS_ASIDE}=$NODE_EXTRA_CA_CERTS; export ${EXTRA_CA_CERTS_ASIDE}; unset NODE_EXTRA_CA_CERTS; }`;
/** glibc's malloc thresholds for the harness, unless the person set tunables of their own (src/malloc-tunables.ts). */
const MALLOC_TUNABLES = `[ -n "\${GLIBC_TUNABLES-}" ] || { GLIBC_TUNABLES=${HARNESS_MALLOC_TUNABLES}; export GLIBC_TUNABLES; }`;

/**
 * What an agent's tmux pane runs (§5.7): the harness under a POSIX sh that waits for it, and
 * when the harness was killed by a signal (SIGKILL, the OOM killer, a crash: status 128+N)
 * runs the reaper for its pane with that status. tmux's pane-died hook stays, but tmux can
 * lose a pane process's SIGCHLD (its libutempter swaps the handler out while it closes a
 * pane: github.com/tmux/tmux/issues/311) and then never runs the hook; the sh is the
 * harness's parent and cannot miss it.
 *
 * The harness's own exits (any status: done, cancelled, refused, failed) ended its record
 * itself, and cost no reaper here. The sh catches Ctrl-C's SIGINT and SIGQUIT so that only the
 * harness acts on them (a caught signal is default again in the harness it runs). A closed
 * window's SIGHUP ends the sh, and the kernel then sends the harness SIGHUP as before.
 *
 * `unset`: variables the pane's environment may hold (from the tmux server's) that neither the
 * harness nor the reaper may see (spawn/harness-keys.ts): the sh drops them itself, where an
 * `env -u` before the harness would cost one more exec on the way to its node (§14). Only names
 * sh can unset: the caller keeps `env -u` for any other (harness-keys.ts `withoutVars`).
 * `caCertsAside`: a vendor CLI's shim starts without NODE_EXTRA_CA_CERTS (src/extra-ca-certs.ts). Every harness starts
 * with glibc's malloc told to give memory back (src/malloc-tunables.ts).
 */
export function paneCommand(
  harness: readonly string[],
  reaper: readonly string[],
  unset: readonly string[] = [],
  opts: { caCertsAside?: boolean } = {},
): string[] {
  // The reaper is no agent: the identity the pane's environment gives the harness is dropped.
  const reap = shellCommand(['env', ...[...AGENT_IDENTITY_VARS].flatMap((v) => ['-u', v]), ...reaper]);
  const script = [
    ...(unset.length ? [`unset ${unset.join(' ')}`] : []),
    ...(opts.caCertsAside ? [CA_CERTS_ASIDE] : []),
    MALLOC_TUNABLES,
    'trap : INT QUIT',
    '"$@"',
    's=$?',
    `if [ "$s" -gt 128 ]; then ${reap} --pane "$TMUX_PANE" --exit-status "$s" >/dev/null; fi`,
    'exit "$s"',
  ].join('\n');
  return ['/bin/sh', '-c', script, 'flotilla-pane', ...harness];
}
