/**
 * glibc's malloc told to hand freed memory back, for an agent's harness (§14). By default glibc raises its
 * thresholds as a process frees large blocks (its "dynamic" mmap threshold), so the memory a harness touched while it
 * started (bundles and their code caches read, a CLI's model catalogue parsed) stays resident while the agent idles:
 * ~5 MB of a vendor CLI's shim (docs/benchmarks-starts.md). Fixed thresholds keep large blocks in their own mappings
 * and trim the heap's top as it frees. Set by the agent's pane sh for the harness's Node alone
 * (spawn/pane-command.ts), and only where the person set no GLIBC_TUNABLES of their own; the harness takes it out of
 * its environment first thing (`mallocTunablesBack`), so the CLI and every command it starts run with glibc's
 * defaults. Elsewhere than glibc the variable means nothing.
 */
export const HARNESS_MALLOC_TUNABLES = 'glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=131072';

/** At a command's start: GLIBC_TUNABLES out of this process's environment, where its pane's sh set it for it alone. */
export function mallocTunablesBack(env: NodeJS.ProcessEnv = process.env): void {
  if (env.GLIBC_TUNABLES === HARNESS_MALLOC_TUNABLES) delete env.GLIBC_TUNABLES;
}
