import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
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
   * Host folders bound in place of another path (`from` seen at `at`), writable unless
   * `readOnly`: an agent's own git dir standing in for the repository's, and the repository's
   * objects seen read-only inside it (tools/git-writable.ts).
   */
  standIns?: readonly { from: string; at: string; readOnly?: boolean }[];
  /**
   * Paths that stay readable wherever they are (a home under /tmp, which the private /tmp
   * would cover): bound read-only, unless a writable dir holds them already.
   */
  visible?: readonly string[];
  /**
   * Existing directories replaced by an empty one, existing files by an empty file: sockets
   * that answer whoever connects (secret handoffs, other agents' doors) and the person's
   * credentials (tools/sandbox-credentials.ts) must not be reachable from inside.
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
   * The user (and group) id inside the user namespace (default: the caller's own). A
   * bubblewrap started inside maps that id to its own user, which the kernel allows for any id
   * but 0 (mapping root needs a capability the sandbox dropped): where the caller is root, a
   * CLI that nests its own sandbox runs as `NESTING_ID` (harness/cli-host/sandboxed-cli.ts).
   */
  id?: number;
  /**
   * Run argv itself rather than under the namespace init (bwrap's own pid 1 still reaps): a
   * vendor CLI keeps its terminal as stdin, which the init's background start would replace
   * with /dev/null (harness/cli-host/sandboxed-cli.ts).
   */
  direct?: boolean;
}

/** Finds bwrap or throws a one-line error saying how to get it or turn the sandbox off. */
export function findBubblewrap(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8', env }).trim();
  } catch {
    throw new FlotillaError(
      "security.sandbox is 'bubblewrap' but bwrap is not installed — install bubblewrap (apt-get install bubblewrap) or set security.sandbox: none",
      { code: 'sandbox-missing' },
    );
  }
}

const usernsProbe = new Map<string, boolean>();

/** What bwrap runs to show it can make a user namespace here. */
export const USERNS_PROBE: readonly string[] = ['--unshare-user', '--ro-bind', '/', '/', 'true'];

/** Whether bwrap can make a user namespace here (probed once per binary). */
export function bubblewrapUserNamespace(bwrap: string): boolean {
  let ok = usernsProbe.get(bwrap);
  if (ok === undefined) {
    ok = spawnSync(bwrap, USERNS_PROBE, { timeout: 10_000 }).status === 0;
    usernsProbe.set(bwrap, ok);
  }
  return ok;
}

/** An answer to a probe here that a caller got beside its own work (sandbox-mode.ts probeSandboxSoon). */
export function knowProbe(probe: 'userns' | 'nests', bwrap: string, ok: boolean): void {
  (probe === 'userns' ? usernsProbe : nestingProbe).set(bwrap, ok);
}

/** The sandbox's own user and group id where root's would keep a nested bubblewrap from mapping its user. */
export const NESTING_ID = 1000;

const nestingProbe = new Map<string, boolean>();

/**
 * Whether a bubblewrap started inside Flotilla's can make its own sandbox here: a user namespace, with the network
 * cut, as Codex's commands get theirs (probed once per binary). It cannot where the kernel or a security module
 * forbids a user namespace inside another, or where bwrap is setuid (no user namespace of its own to nest in).
 */
export function bubblewrapNests(bwrap: string): boolean {
  let ok = nestingProbe.get(bwrap);
  if (ok === undefined) {
    const [file, ...args] = nestingProbeArgv(bwrap, bubblewrapUserNamespace(bwrap));
    ok = spawnSync(file!, args, { timeout: 10_000 }).status === 0;
    nestingProbe.set(bwrap, ok);
  }
  return ok;
}

/** What `bubblewrapNests` runs: a bubblewrap in Flotilla's that makes its own user namespace, the network cut. */
export function nestingProbeArgv(bwrap: string, userNamespace: boolean): string[] {
  const id = process.geteuid?.() === 0 ? NESTING_ID : undefined;
  const spec = { writable: [], readOnly: [], network: true, bwrap, userNamespace, id, direct: true };
  return bubblewrapArgv(spec, [bwrap, '--unshare-user', '--unshare-net', '--ro-bind', '/', '/', 'true']);
}

/**
 * Wraps a command's argv (`sh -c …`) in bubblewrap, under the namespace init. A later mount
 * hides what is below it, so mounts go parents first: the fleet root (read-only) before a
 * worktree inside it (writable) before that worktree's `.claude/` (read-only). Every path is
 * taken through its links first (`mountPath`): a home whose dot-folders are links to
 * elsewhere is mounted where they lead, in that order, so bwrap never mounts onto a link.
 */
export function bubblewrapArgv(spec: SandboxSpec, argv: readonly string[]): string[] {
  const out = [spec.bwrap ?? 'bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  const id = spec.id === undefined ? [] : ['--uid', String(spec.id), '--gid', String(spec.id)];
  out.push(
    ...(spec.userNamespace === false ? [] : ['--unshare-user', ...id]),
    '--unshare-pid',
    '--unshare-ipc',
    '--cap-drop',
    'ALL',
    '--new-session',
    '--die-with-parent',
  );
  type How = 'rw' | 'ro' | 'hide' | 'socket' | 'cover' | 'stand-in' | 'ro-stand-in';
  const listed: { path: string; how: How; from?: string }[] = [
    ...spec.writable.map((path) => ({ path, how: 'rw' as const })),
    ...(spec.standIns ?? []).map(({ from, at, readOnly }) => ({
      path: at,
      how: readOnly ? ('ro-stand-in' as const) : ('stand-in' as const),
      from,
    })),
    ...spec.readOnly.map((path) => ({ path, how: 'ro' as const })),
    ...(spec.visible ?? [])
      .filter((path) => !spec.writable.some((w) => within(mountPath(path), mountPath(w))))
      .map((path) => ({ path, how: 'ro' as const })),
    ...(spec.hidden ?? []).map((path) => ({ path, how: 'hide' as const })),
    ...(spec.sockets ?? []).map((path) => ({ path, how: 'socket' as const })),
    ...(spec.covered ?? []).map((path) => ({ path, how: 'cover' as const })),
  ];
  const unique = new Map(
    listed.map(({ path, how, from }) => {
      const at = mountPath(path);
      return [`${how} ${at}`, { path: at, how, leaf: basename(path), from }] as const;
    }),
  );
  const mounts = [...unique.values()].sort((a, b) => a.path.length - b.path.length);
  // What each path lies in so far, innermost last: a missing folder is made only where writes reach the host.
  const made: { path: string; how: How | 'root' | 'tmp' }[] = [
    { path: '/', how: 'root' },
    { path: '/tmp', how: 'tmp' },
  ];
  const emptied: string[] = [];
  const enclosing = (path: string) => made.filter((m) => m.path === '/' || within(path, m.path)).at(-1)!.how;
  for (const { path, how, leaf, from } of mounts) {
    const kind = pathKind(path);
    if (how === 'rw' || how === 'socket') out.push('--bind', path, path);
    // bwrap reads every source from the host's tree, so what is bound inside it later is the host's own.
    else if (how === 'stand-in') out.push('--bind', from!, path);
    else if (how === 'ro-stand-in') out.push('--ro-bind', from!, path);
    else if (how === 'hide' && kind === 'dir') {
      out.push('--tmpfs', path);
      emptied.push(path);
    }
    // A hidden file reads as empty; so does a tmux socket that cannot be hidden by its folder.
    else if ((how === 'hide' && kind === 'file') || (how === 'cover' && kind)) out.push('--ro-bind', '/dev/null', path);
    else if (how === 'ro' && kind) out.push('--ro-bind', path, path);
    // A missing folder the host would run from, inside a writable one (`.claude/`, the user's
    // config dir under a home that is the cwd), is made first and held read-only like the rest:
    // the command can neither create it nor anything in it. It is made only where the
    // sandbox writes through to the host and this user may write its parent; elsewhere (a
    // read-only home, a hidden folder) nothing inside can make it either. Never `.git`: an
    // empty one left behind would confuse the person's git; a repository the agent makes is
    // its own (docs/security.md).
    else if (how === 'ro' && enclosing(path) === 'rw' && leaf !== '.git' && madeOnHost(path))
      out.push('--ro-bind', path, path);
    else continue;
    made.push({ path, how });
  }
  // Read-only once what is bound back inside (the agent's own door, a CLI's own login) is in.
  for (const path of emptied) out.push('--remount-ro', path);
  if (!spec.network) out.push('--unshare-net');
  out.push('--', ...(spec.direct ? argv : initArgv(argv)));
  return out;
}

/**
 * A path as the kernel finds it: links followed (a dangling one's target, a missing tail
 * appended to the real path of its nearest existing parent). Mounting there, not on the link,
 * keeps the mounts in their order and inside the sandbox's root.
 */
export function mountPath(path: string): string {
  const tail: string[] = [];
  let current = resolve(path);
  for (let links = 0; links < 40;) {
    try {
      return join(realpathSync(current), ...tail);
    } catch {
      /* missing: look at the link or the parent */
    }
    try {
      if (lstatSync(current).isSymbolicLink()) {
        current = resolve(dirname(current), readlinkSync(current));
        links++;
        continue;
      }
    } catch {
      /* missing */
    }
    const parent = dirname(current);
    if (parent === current) break;
    tail.unshift(basename(current));
    current = parent;
  }
  return join(current, ...tail);
}

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.replace(/\/+$/, '') + '/');
}

function pathKind(path: string): 'dir' | 'file' | undefined {
  try {
    return statSync(path).isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

/** Makes a missing folder (and its missing parents) on the host; false where it cannot be. */
function madeOnHost(path: string): boolean {
  try {
    mkdirSync(path, { recursive: true });
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * How to keep tmux servers out of reach (docs/security.md): each socket's directory is
 * hidden behind an empty tmpfs, so neither the socket nor one the server makes again later
 * (tmux re-creates it on SIGUSR1) can be reached. A directory the command needs — `/`, or one
 * holding a writable dir, the home or the install — cannot be hidden; there the socket itself
 * is covered by /dev/null.
 */
export function tmuxHiding(
  tmux: { sockets: readonly string[]; dirs: readonly string[] },
  needed: readonly string[],
): { hidden: string[]; covered: string[] } {
  const hidden = new Set<string>();
  const covered = new Set<string>();
  const holdsNeeded = (dir: string) =>
    dir === '/' || needed.some((n) => n === dir || n.startsWith(dir.replace(/\/+$/, '') + '/'));
  for (const dir of tmux.dirs) if (!holdsNeeded(dir)) hidden.add(dir);
  for (const socket of tmux.sockets) {
    const dir = dirname(socket);
    if (holdsNeeded(dir)) covered.add(socket);
    else hidden.add(dir);
  }
  return { hidden: [...hidden], covered: [...covered] };
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
export function hostExecutedPaths(opts: {
  fleetRoot: string;
  project: string;
  cwd: string;
  home: string;
  userConfigDir: string;
  userCacheDir: string;
  installed?: readonly string[];
}): string[] {
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
  if (process.platform !== 'linux')
    return (probed = { available: false, reason: `${process.platform} has no pid namespaces` });
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
