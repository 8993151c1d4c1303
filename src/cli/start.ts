import { join } from 'node:path';
import { requireCached } from './compile-cache.js';
import { reportError } from '../error-report.js';
import { guardStdout, guardStderr, releaseLostTerminalAtExit, writeOut } from './output.js';
import { BUNDLE_IDS, commandIndex, FAST_COMMANDS, firstCommandName } from './route.js';
import { HARNESS_KIND_ENV, type CacheHooks } from '../start-done.js';
import { VERSION } from '../versions.js';
import { extraCaCertsBack } from '../extra-ca-certs.js';
import { mallocTunablesBack } from '../malloc-tunables.js';

type FullCli = typeof import('./full.js');

/**
 * What the `flotilla` executable runs (main.ts loads this module, dist/cli/start.js, through V8's
 * code cache). Built as CommonJS (tools/build-cli.mjs): Node's ES module loader alone costs
 * ~8 ms of a ~40 ms start, and agents call `flotilla send` constantly (§14).
 * `send`, `status` and `watch` run from their own small CommonJS bundles (fast.ts), loaded through
 * V8's code cache (compile-cache.ts); everything else, and any command line those do not
 * take, loads the full CLI (full.ts: commander and the command's own module) as ES modules.
 * `ranPart` is called when this run did not do a fast command whole: as for the fast bundle,
 * this module's code cache is then not written by it. `loadFull` is main.ts's `import()` of the
 * full CLI: code compiled by node:vm, as this module is, cannot load an ES module itself.
 */
export function run(argv: string[], ranPart: () => void, loadFull: () => Promise<FullCli>): void {
  // What this process starts gets NODE_EXTRA_CA_CERTS, though its sh kept it from this Node's start.
  extraCaCertsBack();
  // Nor glibc's malloc thresholds its pane's sh set for this harness alone.
  mallocTunablesBack();
  // A harness or a `watch` whose window is closed must exit with its own status, not abort.
  releaseLostTerminalAtExit();
  // A command's closers (src/at-exit.ts) are run by the bundle that ran it: fast.ts, full.ts.
  void start(argv, loadFull).then(
    ({ code, whole }) => {
      if (!whole) ranPart();
      process.exitCode = code;
      exitWhenIdle();
    },
    (err: unknown) => {
      ranPart();
      process.exitCode = reportError(err);
    },
  );
}

/** The command's exit code, and whether it was a fast command done whole. */
async function start(argv: string[], loadFull: () => Promise<FullCli>): Promise<{ code: number; whole: boolean }> {
  const args = argv.slice(2);
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
    writeOut(VERSION + '\n');
    return { code: 0, whole: false };
  }
  const name = firstCommandName(args);
  // Where the fleet root is read-only (an agent's sandbox), or the bus's credentials are its
  // harness's (FLOTILLA_DOOR_BUS), fleet commands are run by the agent's harness through its
  // door (cli/door-forward.ts); nothing is loaded for anyone else.
  const door = process.env.FLOTILLA_DOOR;
  const viaBus = process.env.FLOTILLA_DOOR_BUS === '1';
  if (door && name !== undefined && name !== 'send' && (name !== 'status' || viaBus)) {
    const { forwardThroughDoor } = await import('./door-forward.js');
    const code = await forwardThroughDoor(door, args, commandIndex(args), viaBus);
    if (code !== null) return { code, whole: false };
  }
  const bundle = name === undefined ? undefined : FAST_COMMANDS[name];
  if (bundle) {
    const fast = requireCached(join(import.meta.dirname, `fast-${bundle}.js`), BUNDLE_IDS[bundle], cacheKind(args));
    // null: not this bundle's to run (help, a mistake, a path it leaves out): the full CLI's.
    // Its hooks: a long-lived command (`run`) writes its cache once its start is done (src/start-done.ts).
    const hooks: CacheHooks = { skip: () => fast.skip(), save: () => fast.save() };
    const code = await (fast.exports as { run(args: string[], cache: CacheHooks): Promise<number | null> | null }).run(
      args,
      hooks,
    );
    // Only a run that did the whole of a command leaves its compiled code for the next (compile-cache.ts).
    if (code !== 0) fast.skip();
    if (code !== null) return { code, whole: code === 0 };
  }
  // `send` and `status` never touch process.stdout (writeOut): it is made here, for the rest.
  guardStdout();
  guardStderr();
  const { main } = await loadFull();
  return { code: await main(argv), whole: false };
}

/**
 * A spawned harness (`run --spawned`) keeps a code cache per runtime, named by its spawner (HARNESS_KIND_ENV), and the
 * shim host one of its own: a cache holds what the start that wrote it compiled, and a Claude shim reading one an
 * in-process harness wrote gained little from it (docs/benchmarks-starts.md). Every other command has one per bundle.
 */
function cacheKind(args: string[]): string | undefined {
  // The shim host runs vendor agents' shims only: its cache is theirs (src/shim-host/).
  if (args.includes('--shim-host')) return 'host';
  const kind = process.env[HARNESS_KIND_ENV];
  return kind && /^[a-z]+$/.test(kind) && args.includes('--spawned') ? kind : undefined;
}

/**
 * Ends the process once its command has left nothing running (no timer, socket, child or file
 * call: the event loop would end now anyway) rather than after Node's own teardown of the loop
 * and the heap, ~1 ms of every `flotilla send` (§14). 'exit' listeners run either way
 * (compile-cache.ts writes its cache in one); with anything still running, Node ends as usual.
 */
function exitWhenIdle(): void {
  setImmediate(() => {
    if (process.getActiveResourcesInfo().length === 0 && process.listenerCount('beforeExit') === 0) process.exit();
  });
}
