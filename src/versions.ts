import { readFileSync } from 'node:fs';

/**
 * Versions in one place: Flotilla's own, the oldest of everything it runs on, and the one way
 * to compare them (docs/design.md, Requirements).
 */

// The bundler (tools/build-cli.mjs) replaces this name with package.json's version at build
// time; under vitest and in tsc's per-file output it is not defined, and package.json is read.
declare const __FLOTILLA_VERSION__: string | undefined;

/** Flotilla's version, printed by `flotilla --version` and announced by `flotilla mcp`. */
export const VERSION: string = typeof __FLOTILLA_VERSION__ === 'string' ? __FLOTILLA_VERSION__ : packageVersion();

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * The oldest version of each thing Flotilla runs on. Node and tmux are requirements
 * (`spawn` refuses an older tmux, `doctor` fails on either); a vendor CLI is optional, and the
 * minimum is the version its runtime was built and tested against (docs/runtimes.md): an older
 * one may speak another hook protocol, so `doctor` fails on it. package.json's `engines` and
 * pinned devDependencies repeat these for npm; test/shape/versions.test.ts keeps them equal.
 */
export const MINIMUM = {
  node: '20.19',
  tmux: '3.2',
  claude: '2.1.197',
  codex: '0.169.0',
  gemini: '0.61.0',
} as const;

/**
 * The vendor CLI versions every runtime guarantee is proven on: package.json's pinned
 * devDependencies, which the runtime tests drive (test/shape/versions.test.ts keeps them equal).
 * A CLI at another version may open a dialog nobody answers, so `doctor` WARNs and a spawn
 * says so in its pane (harness/cli-host/cli-version.ts). MINIMUM stays at or below these.
 */
export const TESTED = {
  claude: '2.1.197',
  codex: '0.169.0',
  gemini: '0.61.0',
} as const;

/** Whether a vendor CLI's version text shows the tested version exactly; false when it shows none. */
export function isTestedVersion(found: string, tested: string): boolean {
  const have = parseVersion(found);
  return have !== null && compareVersions(have, parseVersion(tested)!) === 0;
}

/**
 * The dotted version inside a tool's answer: `v20.19.1`, `tmux 3.3a` (3.3), `tmux next-3.4`
 * (3.4), `2.1.197 (Claude Code)`, `codex-cli 0.169.0`; null when there is none.
 */
export function parseVersion(text: string): number[] | null {
  const m = /(\d+(?:\.\d+)*)/.exec(text);
  return m ? m[1]!.split('.').map(Number) : null;
}

/** Negative, zero or positive as version `a` is older than, equal to or newer than `b`; missing parts count as 0. */
export function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether a tool's version text shows at least `min`; false when it shows no version. */
export function versionAtLeast(found: string, min: string): boolean {
  const have = parseVersion(found);
  return have !== null && compareVersions(have, parseVersion(min)!) >= 0;
}
