/**
 * What the gate knows about programs that run other programs (a table, not a regex).
 * A wrapper is described the way its own option parser works: which options take a value,
 * which take none, and how many operands come before the command it runs. An option the
 * table does not know makes the command opaque rather than guessed at.
 */

export interface WrapperSpec {
  /** Short options that take a value (`-n 10`, `-n10`). */
  valued: string;
  /** Short options that take none. Any other short option is unknown. `*` accepts all. */
  flags: string;
  /** Long options that take a value when written without `=`. */
  long?: string[];
  /** Long options that take none. */
  longFlags?: string[];
  /** Operands before the wrapped command (`timeout DURATION cmd`, `chroot DIR cmd`). */
  positional?: number;
  /** Options whose value is a shell script run with `sh -c` (`flock -c`, `script -c`). */
  script?: string[];
  /** Runs each of its operands as its own shell script (`watch`, `hyperfine`). */
  operandsAreScript?: boolean;
  /** The wrapped command runs many times with input-made arguments: opaque (`xargs`). */
  opaque?: string;
}

export const WRAPPERS: Record<string, WrapperSpec> = {
  env: {
    valued: 'uCS',
    flags: 'i0v',
    long: ['--unset', '--chdir', '--split-string', '--block-signal', '--default-signal', '--ignore-signal'],
    longFlags: ['--ignore-environment', '--null', '--debug', '--list-signal-handling'],
  },
  timeout: {
    valued: 'sk',
    flags: 'fpv',
    long: ['--signal', '--kill-after'],
    longFlags: ['--foreground', '--preserve-status', '--verbose'],
    positional: 1,
  },
  nice: { valued: 'n', flags: '', long: ['--adjustment'] },
  nohup: { valued: '', flags: '' },
  setsid: { valued: '', flags: 'cfw', longFlags: ['--ctty', '--fork', '--wait'] },
  ionice: {
    valued: 'cnpPu',
    flags: 't',
    long: ['--class', '--classdata', '--pid', '--pgid', '--uid'],
    longFlags: ['--ignore'],
  },
  stdbuf: { valued: 'ioe', flags: '', long: ['--input', '--output', '--error'] },
  time: {
    valued: 'fo',
    flags: 'pavq',
    long: ['--format', '--output'],
    longFlags: ['--portability', '--append', '--verbose', '--quiet'],
  },
  exec: { valued: 'a', flags: 'cl' },
  builtin: { valued: '', flags: '' },
  command: { valued: '', flags: 'p' },
  coproc: { valued: '', flags: '' },
  sudo: {
    valued: 'ugCDhprtUTc',
    flags: 'AbEeHiKklnPSsVv',
    long: [
      '--user',
      '--group',
      '--close-from',
      '--chdir',
      '--host',
      '--prompt',
      '--role',
      '--type',
      '--other-user',
      '--command-timeout',
    ],
    longFlags: [
      '--askpass',
      '--background',
      '--preserve-env',
      '--set-home',
      '--login',
      '--remove-timestamp',
      '--reset-timestamp',
      '--non-interactive',
      '--preserve-groups',
      '--shell',
      '--stdin',
    ],
  },
  doas: { valued: 'uC', flags: 'nsL' },
  chroot: { valued: '', flags: '', long: ['--userspec', '--groups'], longFlags: ['--skip-chdir'], positional: 1 },
  chrt: {
    valued: 'TPD',
    flags: 'abdefiomrRv',
    long: ['--sched-runtime', '--sched-period', '--sched-deadline'],
    longFlags: [
      '--all-tasks',
      '--batch',
      '--deadline',
      '--fifo',
      '--idle',
      '--other',
      '--rr',
      '--reset-on-fork',
      '--verbose',
      '--max',
    ],
    positional: 1,
  },
  taskset: { valued: '', flags: 'acp', longFlags: ['--all-tasks', '--cpu-list', '--pid'], positional: 1 },
  flock: {
    valued: 'wEc',
    flags: 'sxunoFv',
    long: ['--timeout', '--wait', '--conflict-exit-code', '--command'],
    longFlags: ['--shared', '--exclusive', '--unlock', '--nonblock', '--nb', '--close', '--no-fork', '--verbose'],
    positional: 1,
    script: ['-c', '--command'],
  },
  unshare: {
    valued: 'SGRwl',
    flags: 'imnpuUCTrcfk',
    long: [
      '--setuid',
      '--setgid',
      '--root',
      '--wd',
      '--load-interp',
      '--map-user',
      '--map-group',
      '--map-users',
      '--map-groups',
      '--propagation',
      '--setgroups',
    ],
    longFlags: [
      '--ipc',
      '--mount',
      '--net',
      '--pid',
      '--uts',
      '--user',
      '--cgroup',
      '--time',
      '--fork',
      '--kill-child',
      '--mount-proc',
      '--map-root-user',
      '--map-current-user',
      '--map-auto',
      '--keep-caps',
      '--mount-binfmt',
    ],
  },
  setpriv: {
    valued: '',
    flags: 'd',
    long: [
      '--reuid',
      '--regid',
      '--ruid',
      '--rgid',
      '--euid',
      '--egid',
      '--groups',
      '--inh-caps',
      '--ambient-caps',
      '--bounding-set',
      '--securebits',
      '--pdeathsig',
      '--selinux-label',
      '--apparmor-profile',
      '--landlock-access',
      '--landlock-rule',
    ],
    longFlags: ['--dump', '--clear-groups', '--init-groups', '--keep-groups', '--no-new-privs', '--reset-env', '--nnp'],
  },
  strace: {
    valued: 'eoOpPsSuEIabXU',
    flags: 'cCdDfFhiknqrtTvVwxyYzZ',
    long: ['--output', '--expr', '--trace', '--signal', '--attach', '--user', '--env', '--string-limit'],
    longFlags: ['--follow-forks', '--summary-only', '--summary'],
  },
  ltrace: { valued: 'eoOpPsSuEIabXnlLAFDxw', flags: 'cCdfhirtTSV' },
  prlimit: {
    valued: 'p',
    flags: '',
    long: [
      '--pid',
      '--output',
      '--as',
      '--core',
      '--cpu',
      '--data',
      '--fsize',
      '--locks',
      '--memlock',
      '--msgqueue',
      '--nice',
      '--nofile',
      '--nproc',
      '--rss',
      '--rtprio',
      '--rttime',
      '--sigpending',
      '--stack',
    ],
    longFlags: ['--noheadings', '--raw', '--verbose'],
  },
  nsenter: {
    valued: 'tSGrwe',
    flags: 'amuinpUCTFZ',
    long: ['--target', '--setuid', '--setgid', '--root', '--wd', '--env'],
    longFlags: [
      '--all',
      '--mount',
      '--uts',
      '--ipc',
      '--net',
      '--pid',
      '--user',
      '--cgroup',
      '--time',
      '--preserve-credentials',
      '--no-fork',
      '--follow-context',
    ],
  },
  runuser: {
    valued: 'ugGcsw',
    flags: 'lmpfP',
    long: ['--user', '--group', '--supp-group', '--command', '--shell', '--whitelist-environment'],
    longFlags: ['--login', '--preserve-environment', '--pty'],
    script: ['-c', '--command'],
  },
  su: {
    valued: 'gGcsw',
    flags: 'lmpfP',
    long: ['--group', '--supp-group', '--command', '--shell', '--whitelist-environment', '--session-command'],
    longFlags: ['--login', '--preserve-environment', '--pty'],
    script: ['-c', '--command', '--session-command'],
  },
  script: {
    valued: 'cEIOBTt',
    flags: 'aefqhV',
    long: [
      '--command',
      '--echo',
      '--log-in',
      '--log-out',
      '--log-io',
      '--log-timing',
      '--logging-format',
      '--output-limit',
    ],
    longFlags: ['--append', '--return', '--flush', '--force', '--quiet'],
    script: ['-c', '--command'],
    positional: Infinity,
  },
  watch: {
    valued: 'nd',
    flags: 'bcegpqtwhvx',
    long: ['--interval', '--differences'],
    longFlags: [
      '--beep',
      '--color',
      '--errexit',
      '--chgexit',
      '--precise',
      '--no-title',
      '--no-wrap',
      '--exec',
      '--no-linewrap',
    ],
    operandsAreScript: true,
  },
  hyperfine: {
    valued: 'wrmMpcPDLsSuNi',
    flags: 'h',
    long: [
      '--warmup',
      '--runs',
      '--min-runs',
      '--max-runs',
      '--prepare',
      '--conclude',
      '--setup',
      '--cleanup',
      '--parameter-scan',
      '--parameter-step-size',
      '--parameter-list',
      '--style',
      '--shell',
      '--time-unit',
      '--export-asciidoc',
      '--export-csv',
      '--export-json',
      '--export-markdown',
      '--export-orgmode',
      '--command-name',
      '--output',
      '--input',
      '--sort',
    ],
    longFlags: ['--ignore-failure', '--show-output', '--help', '--version'],
    script: ['-p', '--prepare', '-c', '--cleanup', '-s', '--setup', '--conclude'],
    operandsAreScript: true,
  },
  xargs: {
    valued: 'IiEeLlnPsda',
    flags: '0oprtx',
    long: [
      '--max-args',
      '--max-procs',
      '--delimiter',
      '--arg-file',
      '--max-lines',
      '--max-chars',
      '--replace',
      '--eof',
      '--process-slot-var',
    ],
    longFlags: ['--null', '--open-tty', '--interactive', '--no-run-if-empty', '--verbose', '--exit', '--show-limits'],
    opaque: 'xargs runs its command with arguments read from input',
  },
  parallel: { valued: '', flags: '*', opaque: 'parallel runs commands built from its input' },
  sem: { valued: '', flags: '*', opaque: 'sem runs commands built from its input' },
  catchsegv: { valued: '', flags: '' },
  faketime: { valued: 'p', flags: 'fm', positional: 1 },
  'dbus-run-session': { valued: '', flags: '', long: ['--config-file', '--dbus-daemon'] },
  'xvfb-run': {
    valued: 'nsefwp',
    flags: 'alh',
    long: ['--server-num', '--server-args', '--error-file', '--auth-file', '--wait', '--xauth-protocol'],
    longFlags: ['--auto-servernum', '--listen-tcp', '--help'],
  },
  caffeinate: { valued: 'tw', flags: 'dimsu' },
  'ssh-agent': { valued: 'aEPt', flags: 'cDdks' },
  valgrind: { valued: '', flags: 'qv' },
  bwrap: { valued: '', flags: '*', opaque: 'bwrap options take varying numbers of arguments' },
  firejail: { valued: '', flags: '*', opaque: 'firejail runs its command with profile-defined behaviour' },
  'systemd-run': { valued: '', flags: '*', opaque: 'systemd-run starts its command as a unit' },
};

/** Programs that, given `NAME` as their first operand, run that applet (`busybox sh -c …`). */
export const MULTICALL = new Set(['busybox', 'toybox']);

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
