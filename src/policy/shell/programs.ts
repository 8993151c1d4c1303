/**
 * What the gate knows about programs that run code handed to them: shells, interpreters and
 * their inline-code options, and the variables other programs run as a command. Wrappers,
 * which run another program, are in wrappers.ts.
 */

export const SHELLS = new Set([
  'sh',
  'bash',
  'rbash',
  'dash',
  'zsh',
  'ksh',
  'ksh93',
  'mksh',
  'ash',
  'yash',
  'posh',
  'fish',
  'tcsh',
  'csh',
]);
/** Shell options that take a value. */
export const SHELL_VALUED = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file', '-C']);

/** Interpreters and the options that hand them code inline. */
export interface InterpreterSpec {
  /** Options whose value (or the rest of the cluster) is code: `-c`, `-e`, `--eval`. */
  inline: string[];
  /** Short options that take a value (so their value is not the script file). */
  valued: string;
  /** Long options that take a value. */
  long?: string[];
  /** Short options whose value is only ever attached (perl `-i.bak`, `-l`, `-0777`). */
  attached?: string;
  /** A subcommand that runs code given inline (`deno eval`). */
  evalSubcommand?: string[];
}

export const INTERPRETERS: Record<string, InterpreterSpec> = {
  python: { inline: ['-c'], valued: 'WXm', long: ['--check-hash-based-pycs'] },
  pypy: { inline: ['-c'], valued: 'WXm' },
  perl: { inline: ['-e', '-E'], valued: 'IMmxDCF', attached: 'il0' },
  ruby: { inline: ['-e'], valued: 'IrCEFxKT0' },
  node: {
    inline: ['-e', '--eval', '-p', '--print'],
    valued: 'r',
    long: ['--require', '--import', '--loader', '--experimental-loader', '--input-type', '--conditions', '-C'],
  },
  bun: {
    inline: ['-e', '--eval', '-p', '--print'],
    valued: 'r',
    long: ['--preload', '--config', '--cwd'],
    evalSubcommand: [],
  },
  deno: { inline: [], valued: '', evalSubcommand: ['eval', 'repl'] },
  php: { inline: ['-r', '-R', '-B', '-E', '-F'], valued: 'cdz' },
  lua: { inline: ['-e'], valued: 'l' },
  luajit: { inline: ['-e'], valued: 'lbj' },
  rscript: { inline: ['-e', '--expr'], valued: '' },
  julia: { inline: ['-e', '-E', '--eval', '--print'], valued: 'Jpt', long: ['--project', '--threads', '--sysimage'] },
  osascript: { inline: ['-e'], valued: 'lis' },
  pwsh: { inline: ['-c', '-command', '-encodedcommand', '-ec', '-e'], valued: 'f' },
  powershell: { inline: ['-c', '-command', '-encodedcommand', '-ec', '-e'], valued: 'f' },
  tclsh: { inline: [], valued: '' },
  wish: { inline: [], valued: '' },
  expect: { inline: ['-c'], valued: 'f' },
  guile: { inline: ['-c', '-e'], valued: 'lLsx' },
  racket: { inline: ['-e', '--eval'], valued: 'tlfrp' },
  sbcl: { inline: ['--eval'], valued: '', long: ['--load', '--script', '--core'] },
  gdb: { inline: ['-ex', '-eval-command', '--eval-command', '-iex', '-batch-silent'], valued: 'xpcd' },
  jshell: { inline: [], valued: '' },
  irb: { inline: [], valued: '' },
  emacs: { inline: ['--eval', '-eval', '-f', '--funcall', '-l', '--load'], valued: '' },
};

/** `python3.12` → `python`, `pypy3` → `pypy`, `Rscript` → `rscript`. */
export function interpreterKey(name: string): string | undefined {
  const n = name.toLowerCase();
  if (INTERPRETERS[n]) return n;
  const m = /^(python|pypy|perl|ruby|node|php|lua|luajit|julia)[0-9.]*$/.exec(n);
  if (m) return m[1];
  if (n === 'nodejs') return 'node';
  return undefined;
}

/** Variables whose value programs run as a command (or load as code) when set for them. */
export const COMMAND_VARIABLES = new Set([
  'BASH_ENV',
  'ENV',
  'PROMPT_COMMAND',
  'PS4',
  'SHELLOPTS',
  'BASHOPTS',
  'LD_PRELOAD',
  'LD_AUDIT',
  'PAGER',
  'GIT_PAGER',
  'MANPAGER',
  'SYSTEMD_PAGER',
  'EDITOR',
  'VISUAL',
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_EXTERNAL_DIFF',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GIT_PROXY_COMMAND',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'LESSOPEN',
  'LESSCLOSE',
  'PERL5OPT',
  'PERL5DB',
  'NODE_OPTIONS',
  'RUBYOPT',
  'PYTHONSTARTUP',
  'PYTHONINSPECT',
  'BROWSER',
  'DIFFPROG',
  'MAKEFLAGS',
  'TAR_OPTIONS',
  'FCEDIT',
  'SUDO_ASKPASS',
]);
