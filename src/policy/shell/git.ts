/**
 * git's own options (before the subcommand) and the configuration that makes git run a
 * command: `-c alias.x='!…'`, `-c core.pager=…`, hooks and helpers.
 */

/** Global options that take a value in the next word. */
const GIT_VALUED = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--super-prefix', '--config-env', '--list-cmds', '--attr-source']);

/** Config keys whose value git runs as a command (or that load one from elsewhere). */
const RUNS_COMMAND = /^(core\.(pager|editor|sshcommand|hookspath|fsmonitor|askpass|gitproxy|attributesfile|excludesfile)|credential\.|diff\..*\.(textconv|command)|difftool\.|mergetool\.|filter\.|merge\..*\.driver|pager\.|sequence\.editor|gpg\.|uploadpack\.|receive\.procreceiverefs|protocol\.|include\.|includeif\.|remote\..*\.(uploadpack|receivepack|vcs)|url\.|http\.proxy|instaweb\.|sendemail\..*cmd|web\.browser|browser\.)/i;

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
    if (RUNS_COMMAND.test(c) || /^alias\.[^=]*=\s*!/i.test(c)) return `git -c ${c.split('=')[0]} makes git run a command`;
  }
  if (sub === -1) return args.some((a) => a === undefined) ? 'git is given arguments built by an expansion' : undefined;
  const s = args[sub];
  const rest = args.slice(sub + 1);
  if (s === 'config') {
    const at = rest.findIndex((a) => a !== undefined && !a.startsWith('-'));
    const key = rest[at];
    const value = rest[at + 1];
    // A shell alias (`!…`) or a key whose value git runs: the command runs later, unseen.
    if (key !== undefined && rest.length > at + 1 && (RUNS_COMMAND.test(key) || (/^alias\./i.test(key) && (value === undefined || /^\s*!/.test(value))))) return `git config ${key} sets a command git will run`;
  }
  if (s === 'filter-branch' || s === 'filter-repo') return `git ${s} runs commands given as filters`;
  return undefined;
}
