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
