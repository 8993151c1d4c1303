/** The first argument that is not an option (or an option's value) of the program itself. */
export function firstCommandName(args: string[]): string | undefined {
  const i = commandIndex(args);
  return i === -1 ? undefined : args[i];
}

/** Where that argument is, or -1. */
export function commandIndex(args: string[]): number {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--root') {
      i++;
      continue;
    }
    if (a === '--') return -1;
    if (a.startsWith('-')) continue;
    return i;
  }
  return -1;
}

// tools/build-cli.mjs writes the commands' fast flags here (registry.ts fastRoutes); under
// vitest and in tsc's per-file output it is not defined, and nothing is routed.
declare const __FLOTILLA_FAST_COMMANDS__: Record<string, string> | undefined;

/**
 * The commands that run on the fast path (fast.ts), by the name or alias a person types,
 * mapped to the bundle that holds each (dist/cli/fast-<bundle>.js): each command's `fast`
 * flag, collected at build time.
 */
export const FAST_COMMANDS: Record<string, string> =
  typeof __FLOTILLA_FAST_COMMANDS__ === 'object' ? __FLOTILLA_FAST_COMMANDS__ : {};

// tools/build-cli.mjs writes each fast bundle's content hash here, once the bundles are built; undefined as above.
declare const __FLOTILLA_BUNDLE_IDS__: Record<string, string> | undefined;

/** Each fast bundle's build, by bundle name: its code cache's key (compile-cache.ts), known without a `stat`. */
export const BUNDLE_IDS: Record<string, string> =
  typeof __FLOTILLA_BUNDLE_IDS__ === 'object' ? __FLOTILLA_BUNDLE_IDS__ : {};
