/**
 * git's own options (before the subcommand) and the configuration that makes git run a
 * command: `-c alias.x='!…'`, `-c core.pager=…`, hooks and helpers.
 */

import { literalWord, type Word } from './words.js';

/** Global options that take a value in the next word. */
const GIT_VALUED = new Set([
  '-C',
  '-c',
  '--git-dir',
  '--work-tree',
  '--namespace',
  '--exec-path',
  '--super-prefix',
  '--config-env',
  '--list-cmds',
  '--attr-source',
]);

/** Config keys whose value git runs as a command (or that load one from elsewhere). */
const RUNS_COMMAND =
  /^(core\.(pager|editor|sshcommand|hookspath|fsmonitor|askpass|gitproxy|attributesfile|excludesfile)|credential\.|diff\..*\.(textconv|command)|difftool\.|mergetool\.|filter\.|merge\..*\.driver|pager\.|sequence\.editor|gpg\.|uploadpack\.|receive\.procreceiverefs|protocol\.|include\.|includeif\.|remote\..*\.(uploadpack|receivepack|vcs)|url\.|http\.proxy|instaweb\.|sendemail\..*cmd|web\.browser|browser\.)/i;

export interface GitArgs {
  /** Index of the subcommand in args, or -1. */
  sub: number;
  /** `-c key=value` and `--config-env` settings. */
  config: string[];
}

export function splitGitArgs(args: readonly (string | undefined)[]): GitArgs {
  const config: string[] = [];
  let k = 0;
  while (k < args.length) {
    const a = args[k];
    if (a === undefined) return { sub: -1, config };
    if (!a.startsWith('-')) return { sub: k, config };
    const name = a.split('=')[0]!;
    if (GIT_VALUED.has(name) && !a.includes('=') && !/^-c./.test(a)) {
      if (name === '-c' || name === '--config-env') config.push(args[k + 1] ?? '');
      k += 2;
      continue;
    }
    if (a.startsWith('-c') && a.length > 2) config.push(a.slice(2));
    if (a.startsWith('--config-env=')) config.push(a.slice(13));
    k++;
  }
  return { sub: -1, config };
}

/** Why git would run something the gate cannot see, or undefined. */
export function gitOpaqueReason(words: readonly { value: string | undefined }[]): string | undefined {
  const args = words.map((w) => w.value);
  const { sub, config } = splitGitArgs(args);
  for (const c of config) {
    if (RUNS_COMMAND.test(c) || /^alias\.[^=]*=\s*!/i.test(c))
      return `git -c ${c.split('=')[0]} makes git run a command`;
  }
  if (sub === -1) return args.some((a) => a === undefined) ? 'git is given arguments built by an expansion' : undefined;
  const s = args[sub];
  const rest = args.slice(sub + 1);
  if (s === 'config') {
    const at = rest.findIndex((a) => a !== undefined && !a.startsWith('-'));
    const key = rest[at];
    const value = rest[at + 1];
    // A shell alias (`!…`) or a key whose value git runs: the command runs later, unseen.
    if (
      key !== undefined &&
      rest.length > at + 1 &&
      (RUNS_COMMAND.test(key) || (/^alias\./i.test(key) && (value === undefined || /^\s*!/.test(value))))
    )
      return `git config ${key} sets a command git will run`;
  }
  if (s === 'filter-branch' || s === 'filter-repo') return `git ${s} runs commands given as filters`;
  return undefined;
}

/**
 * The arguments git runs when the subcommand is an alias defined inline (`-c alias.p='push
 * --force'`) or earlier on the line (`git config alias.p …`): the alias's words replace the
 * subcommand. A shell alias (`!…`) is opaque elsewhere; `--config-env` takes the value from the
 * environment: null. Undefined when no alias applies.
 */
export function expandGitAlias(
  args: readonly Word[],
  defined: (name: string) => string | undefined,
): Word[] | null | undefined {
  const values = args.map((w) => w.value);
  const { sub, config } = splitGitArgs(values);
  const name = values[sub];
  if (sub === -1 || name === undefined) return undefined;
  const key = `alias.${name.toLowerCase()}`;
  let value: string | undefined;
  for (const c of config) {
    const eq = c.indexOf('=');
    if (eq !== -1 && c.slice(0, eq).toLowerCase() === key) value = c.slice(eq + 1);
  }
  if (
    values.some((v, k) =>
      (v === '--config-env' ? values[k + 1] : v?.startsWith('--config-env=') ? v.slice(13) : undefined)
        ?.toLowerCase()
        .startsWith(`${key}=`),
    )
  )
    return null;
  value ??= defined(name.toLowerCase());
  if (value === undefined || /^\s*!/.test(value)) return undefined;
  const words = splitCommandLine(value);
  return [...args.slice(0, sub), ...words.map(literalWord), ...args.slice(sub + 1)];
}

/** `git config [scope] alias.NAME VALUE` → [name, value]. */
export function gitAliasDefinition(args: readonly (string | undefined)[]): [string, string] | undefined {
  const { sub } = splitGitArgs(args);
  if (sub === -1 || args[sub] !== 'config') return undefined;
  const rest = args.slice(sub + 1);
  let k = 0;
  while (k < rest.length && rest[k]?.startsWith('-')) k += /^(-f|--file|--blob)$/.test(rest[k]!) ? 2 : 1;
  const key = rest[k];
  const value = rest[k + 1];
  const m = key === undefined ? null : /^alias\.(.+)$/i.exec(key);
  return m && value !== undefined && rest.length === k + 2 ? [m[1]!.toLowerCase(), value] : undefined;
}

/** git's own split of an alias value: whitespace between words, `'…'`, `"…"` and backslash quote. */
function splitCommandLine(s: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  let quote: string | undefined;
  for (let k = 0; k < s.length; k++) {
    const c = s[k]!;
    if (!quote && /\s/.test(c)) {
      if (word !== undefined) out.push(word);
      word = undefined;
      continue;
    }
    word ??= '';
    if (c === '\\' && k + 1 < s.length && quote !== "'") word += s[++k];
    else if (quote && c === quote) quote = undefined;
    else if (!quote && (c === '"' || c === "'")) quote = c;
    else word += c;
  }
  if (word !== undefined) out.push(word);
  return out;
}
