/**
 * What a command must let go of before the CLI exits (an open NATS connection would keep the
 * process alive). A module that opens such a thing registers its closer here when it loads, so
 * a command that never loads it pays nothing; the CLI's entries (cli/fast.ts, cli/full.ts) run
 * the closers once their command is done. Each CLI bundle has its own copy of this registry
 * and of the modules that register in it, which is why each entry runs its own.
 */
const closers = new Set<() => Promise<void>>();

/** Runs `close` when the command is done (`runAtExit`); a closer that fails is ignored. */
export function atExit(close: () => Promise<void>): void {
  closers.add(close);
}

/** Runs and forgets every registered closer. */
export async function runAtExit(): Promise<void> {
  const all = [...closers];
  closers.clear();
  await Promise.all(all.map((close) => close().catch(() => undefined)));
}
