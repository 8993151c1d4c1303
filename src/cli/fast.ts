import { runAtExit } from '../at-exit.js';
import { useCacheHooks, type CacheHooks } from '../start-done.js';
import { chunksSkip } from './chunk.js';
import { reportError } from '../error-report.js';
import type { SpecCommandModule } from './registry.js';
import { commandIndex } from './route.js';
import { parseBySpec } from './spec.js';

/**
 * The commands agents and people run constantly (a spec's `fast` flag), run without
 * commander (§14): `send` and `status` start at close to Node's own start-up, and `watch`
 * draws its first frame sooner. A command line is taken here only when the command's spec
 * parses it without doubt (spec.ts); for help and every mistake this returns null and
 * main.ts hands the line to the full CLI. It resolves to null too when the command met a
 * module its bundle leaves out (the spec's `fastLeavesOut`): the full CLI runs it instead.
 * Errors are reported here, by the same bundle that threw them (their classes are its own).
 */
export function fastRun(module: SpecCommandModule, args: string[], cache?: CacheHooks): Promise<number | null> | null {
  const at = commandIndex(args);
  if (at === -1) return null;
  const parsed = parseBySpec(
    module.spec,
    args.filter((_, i) => i !== at),
  );
  if (!parsed) return null;
  // `cache`: this bundle's code cache, for a command that writes it once its start is done (start-done.ts).
  useCacheHooks(cache);
  return module
    .run({ args: parsed.args, opts: parsed.opts }, parsed.globals)
    .then(
      () => (typeof process.exitCode === 'number' ? process.exitCode : 0),
      (err: unknown) => (leftOut(err) ? null : reportError(err)),
    )
    .then((code) => {
      // As for the bundle (main.ts): only a run that did its whole command leaves its compiled code.
      if (code !== 0) chunksSkip();
      return code;
    })
    .finally(runAtExit);
}

/** The error a left-out module throws when loaded: tools/build-cli.mjs writes its stand-in with this code. */
function leftOut(err: unknown): boolean {
  return err instanceof Error && (err as Error & { code?: unknown }).code === 'fast-bundle-left-out';
}
