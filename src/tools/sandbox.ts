import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { FlotillaError } from '../errors.js';

/**
 * The OS sandbox for shell commands (§11, `security.sandbox: bubblewrap`): the command sees
 * the whole filesystem read-only and may write only its working directory, the agent's
 * memory dir and a private /tmp; inside those, whatever later runs on the host (the fleet
 * root, `.claude/`, the git dir, user-level config) is bound read-only again, and tmux servers
 * are hidden.
 * It runs in its own user and pid namespaces with no capabilities, in a new session, dies
 * with the harness, sees only its own processes and has no network unless allowed. This, not
 * the shell gate, is the boundary against a hostile model (docs/security.md).
 */
export interface SandboxSpec {
  /** Directories the command may write (cwd, memory dir). */
  writable: readonly string[];
  /** Paths kept read-only even when inside a writable one (see `hostExecutedPaths`). */
  readOnly: readonly string[];
  /**
   * Existing directories replaced by an empty one: sockets that answer whoever connects
   * (secret handoffs, other agents' doors) must not be reachable from inside.
   */
  hidden?: readonly string[];
  /** Unix sockets bound back in at their own path (the agent's own door, inbox/door.ts). */
  sockets?: readonly string[];
  /**
   * Sockets covered by /dev/null where their directory cannot be hidden (a tmux socket placed
   * in a directory the command needs, see `tmuxHiding`).
   */
  covered?: readonly string[];
  network: boolean;
  /** The bwrap binary (default: found on PATH). */
  bwrap?: string;
  /**
   * Run in a new user namespace (default true). Without one (a kernel that forbids them),
   * bwrap must be setuid or run by root, and `--cap-drop ALL` is what removes root's powers.
   */
  userNamespace?: boolean;
  /**
   * Run argv itself rather than under the namespace init (bwrap's own pid 1 still reaps): a
   * vendor CLI keeps its terminal as stdin, which the init's background start would replace
   * with /dev/null (harness/vendor/sandboxed-cli.ts).
   */
  direct?: boolean;
}

/** Finds bwrap or throws a one-line error saying how to get it or turn the sandbox off. */
export function findBubblewrap(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8', env }).trim();
  } catch {
    throw new FlotillaError("security.sandbox is 'bubblewrap' but bwrap is not installed — install bubblewrap (apt-get install bubblewrap) or set security.sandbox: none", { code: 'sandbox-missing' });
  }
}

const usernsProbe = new Map<string, boolean>();

/** Whether bwrap can make a user namespace here (probed once per binary). */
export function bubblewrapUserNamespace(bwrap: string): boolean {
  let ok = usernsProbe.get(bwrap);
  if (ok === undefined) {
    ok = spawnSync(bwrap, ['--unshare-user', '--ro-bind', '/', '/', 'true'], { timeout: 10_000 }).status === 0;
    usernsProbe.set(bwrap, ok);
  }
  return ok;
}

/**
 * Wraps a command's argv (`sh -c …`) in bubblewrap, under the namespace init. A later mount
 * hides what is below it, so mounts go parents first: the fleet root (read-only) before a
 * worktree inside it (writable) before that worktree's `.claude/` (read-only).
 */
export function bubblewrapArgv(spec: SandboxSpec, argv: readonly string[]): string[] {
  const out = [spec.bwrap ?? 'bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  out.push(...(spec.userNamespace === false ? [] : ['--unshare-user']), '--unshare-pid', '--unshare-ipc', '--cap-drop', 'ALL', '--new-session', '--die-with-parent');
  type Mount = { path: string; how: 'rw' | 'ro' | 'hide' | 'socket' | 'cover' };
  const mounts: Mount[] = [
    ...spec.writable.map((path) => ({ path, how: 'rw' as const })),
    ...spec.readOnly.map((path) => ({ path, how: 'ro' as const })),
    ...(spec.hidden ?? []).filter((path) => isDirectory(path)).map((path) => ({ path, how: 'hide' as const })),
    ...(spec.sockets ?? []).map((path) => ({ path, how: 'socket' as const })),
    ...(spec.covered ?? []).filter((path) => existsSync(path)).map((path) => ({ path, how: 'cover' as const })),
  ];
  mounts.sort((a, b) => a.path.length - b.path.length);
  for (const { path, how } of mounts) {
    if (how === 'rw' || how === 'socket') out.push('--bind', path, path);
    else if (how === 'hide') out.push('--tmpfs', path);
    else if (how === 'cover') out.push('--ro-bind', '/dev/null', path);
    else if (existsSync(path)) out.push('--ro-bind', path, path);
    // A missing directory that could be created inside a writable one (`.claude/agents/x.md`,
    // `.git/hooks/pre-commit`) is held by an empty read-only mount; its empty mount point
    // stays behind on the host. Missing files (`.git/config`) have nothing to hold.
    // Never `.git`: an empty one left behind would confuse the person's git; a repository the agent makes is its own (docs/security.md).
    else if (spec.writable.some((w) => path.startsWith(w + '/')) && isDirectory(dirname(path)) && basename(path) !== '.git') {
      out.push('--tmpfs', path, '--remount-ro', path);
    }
  }
  if (!spec.network) out.push('--unshare-net');
  out.push('--', ...(spec.direct ? argv : initArgv(argv)));
  return out;
}

/**
 * How to keep tmux servers out of reach (docs/security.md): each socket's directory is
 * hidden behind an empty tmpfs, so neither the socket nor one the server makes again later
 * (tmux re-creates it on SIGUSR1) can be reached. A directory the command needs — `/`, or one
 * holding a writable dir, the home or the install — cannot be hidden; there the socket itself
 * is covered by /dev/null.
 */
export function tmuxHiding(tmux: { sockets: readonly string[]; dirs: readonly string[] }, needed: readonly string[]): { hidden: string[]; covered: string[] } {
  const hidden = new Set<string>();
  const covered = new Set<string>();
  const holdsNeeded = (dir: string) => dir === '/' || needed.some((n) => n === dir || n.startsWith(dir.replace(/\/+$/, '') + '/'));
  for (const dir of tmux.dirs) if (!holdsNeeded(dir)) hidden.add(dir);
  for (const socket of tmux.sockets) {
    const dir = dirname(socket);
    if (holdsNeeded(dir)) covered.add(socket);
    else hidden.add(dir);
  }
  return { hidden: [...hidden], covered: [...covered] };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * What runs on the host later and so must stay read-only inside the writable dirs: the fleet
 * root (definitions, hooks, config, fleet state), `.claude/` (definitions and settings other
 * tools run), a repository's whole git dir (below), the user-level config, definition and
 * memory roots, the CLI's compiled-code cache (code the next `flotilla send` on the host
 * runs), and Flotilla's own install and Node (`installed`, see `installedPaths`).
 * Each is bound as a directory, and a mount point can be neither renamed nor replaced: a
 * command cannot move `.git` aside and build another with hooks beside it. The agent's own
 * memory dir is written again on top.
 */
export function hostExecutedPaths(opts: { fleetRoot: string; project: string; cwd: string; home: string; userConfigDir: string; userCacheDir: string; installed?: readonly string[] }): string[] {
  const dirs = new Set([opts.project, opts.cwd]);
  const out = [opts.fleetRoot];
  for (const d of dirs) out.push(join(d, '.claude'), join(d, '.flotilla'), ...gitPaths(d));
  out.push(opts.userConfigDir, opts.userCacheDir, join(opts.home, '.claude'), join(opts.home, '.flotilla'));
  return [...new Set([...out, ...(opts.installed ?? [])])];
}

/**
 * A repository's git dir, whole (docs/decisions.md, "The git dir is read-only in the
 * sandbox"): hooks and config run on the host, and so does whatever a new `commondir`,
 * `worktrees/*` or `modules/*` entry points git at, so no part of it is writable. For a
 * worktree or submodule `.git` is a file naming the git dir; the file, that git dir and its
 * common dir are all held.
 */
export function gitPaths(dir: string): string[] {
  const dotGit = join(dir, '.git');
  let gitFile: string;
  try {
    if (!statSync(dotGit).isFile()) return [dotGit];
    gitFile = readFileSync(dotGit, 'utf8');
  } catch {
    return [dotGit];
  }
  const named = /^gitdir:\s*(.+?)\s*$/m.exec(gitFile)?.[1];
  if (!named) return [dotGit];
  const gitDir = resolve(dir, named);
  let common: string[] = [];
  try {
    common = [resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim())];
  } catch {
    // A submodule's git dir has no common dir of its own.
  }
  return [dotGit, gitDir, ...common];
}

/**
 * The parts of Flotilla's install a contained command runs (`flotilla send`, `spawn-agent`)
 * and the host runs next (the harness loads dist/ lazily), and the directory of the Node that
 * runs them. Bound read-only, they are visible even when the private /tmp covers the install
 * (a checkout or `npm ci` under /tmp), and not writable when it lies inside the agent's cwd.
 * The package's sources are not here: an agent may edit them, not what the host executes.
 */
export function installedPaths(packageRoot: string, execPath: string): string[] {
  const root = packageRoot.replace(/\/+$/, '');
  return ['dist', 'node_modules', 'tools', 'package.json'].map((p) => join(root, p)).concat(dirname(execPath));
}

/**
 * The namespace init every contained command runs under (`sh -c INIT flotilla-init <argv…>`).
 * It starts the command, reports its exit status on fd 3 (the tool returns then), closes the
 * output pipes, and stays alive while anything the command left behind still runs, so an
 * orphan (`setsid -f`, `( … & )`, `nohup … &`, a double fork) is reparented to it, inside the
 * agent's process tree, instead of to the host's init: ancestry, and with it lineage, holds.
 * `kill -0 -1` fails once nothing but the init is left in the namespace.
 */
export const NAMESPACE_INIT = [
  '"$@" 3>&- & m=$!',
  'exec >/dev/null 2>&1',
  'wait "$m"; s=$?',
  'echo "$s" >&3; exec 3>&-',
  'while kill -0 -1; do sleep 1 & wait $!; done',
  'exit "$s"',
].join('\n');

export function initArgv(argv: readonly string[]): string[] {
  return ['sh', '-c', NAMESPACE_INIT, 'flotilla-init', ...argv];
}

/** How tool commands are contained without the sandbox, or why they cannot be. */
export type PidNamespace = { available: true; prefix: string[] } | { available: false; reason: string };

let probed: PidNamespace | undefined;

/**
 * A pid namespace per tool command (util-linux `unshare`): root needs no user namespace;
 * anyone else gets one that maps their own uid to itself. The namespace outlives the harness
 * only until the harness's end (or the reaper) kills its recorded group
 * (lifecycle/tool-groups.ts), which spares one holding a background child agent. Probed once.
 */
export function pidNamespace(): PidNamespace {
  if (probed) return probed;
  if (process.platform !== 'linux') return (probed = { available: false, reason: `${process.platform} has no pid namespaces` });
  const flags = ['--pid', '--fork', '--kill-child', ...(process.geteuid?.() === 0 ? [] : ['--map-current-user'])];
  const prefix = ['unshare', ...flags];
  const r = spawnSync(prefix[0]!, [...prefix.slice(1), 'true'], { encoding: 'utf8', timeout: 10_000 });
  if (r.status === 0) return (probed = { available: true, prefix });
  const why = r.error ? r.error.message : (r.stderr || `exit ${r.status}`).trim().split('\n')[0]!;
  return (probed = { available: false, reason: `${prefix.join(' ')} failed: ${why}` });
}

/** Wraps a command in its own pid namespace under the namespace init; unchanged where there is none. */
export function pidNamespaceArgv(argv: readonly string[], ns: PidNamespace = pidNamespace()): string[] {
  return ns.available ? [...ns.prefix, ...initArgv(argv)] : [...argv];
}
