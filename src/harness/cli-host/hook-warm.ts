import { loadRuntime, type VendorRuntimeName } from '../../runtimes/index.js';

/**
 * Loads what the hooks load when asked (hook.ts itself, its CLI's hook protocol, the inbox reader and claim, the read
 * scope and lease checks): a vendor CLI's shim does it while its CLI starts (door-send.ts). The shell gate's parser is
 * left out: only a shell command's pre-tool loads it.
 */
export async function preloadRuntimeHook(runtime: VendorRuntimeName): Promise<void> {
  await Promise.all([
    import('./hook.js'),
    import('../../tools/scrub.js'),
    loadRuntime(runtime),
    import('../../inbox/read.js'),
    import('../../inbox/claim.js'),
    import('../../inbox/surface.js'),
    import('./read-scope.js'),
    import('./lease-check.js'),
  ]);
}

/** How long after the CLI's first turn started the marker pattern is compiled: after its first request is out. */
const SCRUB_WARM_MS = 1_500;
let scrubWarm: NodeJS.Timeout | undefined;

/**
 * V8 compiles the marker pattern (tools/scrub.ts) at its first run and again at its second, ~57 ms of CPU on a quiet
 * machine: mail with a `<` in it would pay that on the way to the model. Done once, after the CLI's first turn has
 * started (its first request out), not as the CLI starts, where it was CPU taken from the CLI's own start.
 */
export function warmMarkerScrub(): void {
  scrubWarm ??= setTimeout(() => {
    import('../../tools/scrub.js').then(
      ({ scrubHarnessMarkers }) => {
        scrubHarnessMarkers('<');
        scrubHarnessMarkers('<');
      },
      // Only ahead of time: a first mail pays it instead.
      () => undefined,
    );
  }, SCRUB_WARM_MS).unref();
}
