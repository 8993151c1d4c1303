/**
 * What a vendor agent's start loads before its CLI's exec (the harness, the shim, the CLI's preparation and sandbox),
 * loaded once the host listens: the fleet's first pane then finds them loaded, or loading, as a running host's panes
 * do (§14). A module that fails to load here fails again where the agent needs it, and is reported there.
 */
export function warmAgentStart(): Promise<unknown> {
  return Promise.allSettled([
    import('../harness/run.js'),
    import('../spawn/harness-keys.js'),
    import('../definitions/load.js'),
    import('../harness/cli-host/shim.js'),
    import('../spawn/runtime-env.js'),
    import('../tools/sandbox-mode.js'),
    import('../harness/cli-host/sandboxed-cli.js'),
    import('../config/trust-store.js'),
    import('../secrets/keys.js'),
    import('../runtimes/model-catalog.js'),
    import('../harness/cli-host/cli-version.js'),
    import('../harness/cli-host/inherited.js'),
    import('../inbox/adopt.js'),
  ]);
}
