import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { isCheckoutTop } from './git-top.js';

/**
 * The only code that builds paths under the fleet root (§1). Everything else asks a
 * `Layout` for its paths, so the on-disk shape is defined in exactly one place.
 */
export interface Layout {
  /** The fleet root, normally `<project>/.flotilla`. */
  readonly root: string;
  /** The project the fleet works on. */
  readonly project: string;
  readonly configFile: string;
  readonly agentsDir: string;
  readonly state: string;
  readonly registryDir: string;
  readonly registryTmp: string;
  readonly inboxRoot: string;
  readonly transcriptsDir: string;
  readonly outputDir: string;
  readonly logsDir: string;
  readonly auditFile: string;
  /** How much of `auditFile` is on the bus (`state/audit-sent.json`; src/audit/cursor.ts). */
  readonly auditCursor: string;
  readonly slotsDir: string;
  readonly worktreesDir: string;
  /** Exactly-once markers (completion sent, stop hook fired), created with O_EXCL. */
  readonly markersDir: string;
  registryFile(id: string): string;
  /** The task prompt the spawner hands to a child harness. */
  taskFile(id: string): string;
  /** A vendor-runtime agent's own config folder (CLAUDE_CONFIG_DIR, CODEX_HOME, …; §13). */
  runtimeDir(id: string): string;
  marker(name: string): string;
  /** One empty file per child, named by its id: a parent's cheap index of its children. */
  children(parentId: string): string;
  /** Indexes beside the registry, rebuildable from the records (src/fleet/registry-index.ts). */
  readonly indexDir: string;
  /** One empty file per agent whose record may not be terminal yet. */
  readonly liveIndexDir: string;
  liveIndex(id: string): string;
  /**
   * One file per agent whose ending is under way (`state/index/finishing/<id>`): a dead harness leaving one owes the
   * rest.
   */
  readonly finishingDir: string;
  finishing(id: string): string;
  /** Present once the indexes were built from the records (absent: rebuild). */
  readonly indexMarker: string;
  /** Agent ids in the order they ended, one a line (for `status`'s window of recent agents). */
  readonly endedLog: string;
  /** Final usage of each ended agent of a tree, one line each. */
  treeUsage(rootId: string): string;
  /** Cached effective config, keyed by the files and variables it came from. */
  readonly configCache: string;
  /** A folder: each worktree's `git status` count for `review`, keyed by what git reads (src/work/status-cache.ts). */
  readonly worktreeStatusCache: string;
  /** The last review's branch states, keyed by every tip and base (src/work/branch-cache.ts). */
  readonly reviewBranchCache: string;
  /** In-place agents' tips not yet imported, counted against their bases (src/work/standing-cache.ts). */
  readonly inPlaceStandingCache: string;
  inbox(id: string): string;
  /** Mail this host sent on a bus that has not acknowledged it yet (`state/outbox/{tmp,new}`; src/bus/outbox.ts). */
  readonly outbox: string;
  /** Touched by whichever process of this host last put its heartbeat on the bus (src/bus/nats/records.ts). */
  readonly hostBeat: string;
  /** Since when this host's beats have reached the bus without a gap (src/bus/nats/steady.ts). */
  readonly hostSteady: string;
  /** One empty file per record whose last publish did not reach the bus (`state/unpublished/<id>`). */
  readonly unpublished: string;
  /** One empty file per record gc removed here and owes the bus's removal of (`state/bus-gc/<id>`). */
  readonly busGcOwed: string;
  transcript(id: string): string;
  transcriptMeta(id: string): string;
  output(id: string): string;
  /**
   * One task's final answer (`output/<id>.tasks/<n>.md`) and how it ended (`<n>.json`): never overwritten by a later
   * task.
   */
  taskOutput(id: string, task: number): string;
  taskResult(id: string, task: number): string;
  log(id: string): string;
  worktree(id: string): string;
  /**
   * An in-place agent's own git dir: its HEAD, index, branch and objects, seen as the checkout's `.git` in its sandbox
   * (tools/git-writable.ts).
   */
  inPlaceGitDir(id: string): string;
  projectMemory(name: string): string;
  localMemory(name: string): string;
  /** The answer `flotilla approve`/`deny` writes for a waiting harness. */
  approvalAnswer(requestId: string): string;
  /** Claimed once, O_EXCL, by whoever runs an agent's stop hooks. */
  stopHookMarker(agentId: string): string;
  /** Numbered O_EXCL files counting a tree's spawns (`slots/tree-<root>/spawn-<n>`). */
  treeSpawns(rootId: string): string;
  /** Per-request handoff sockets and revoke markers of secret requests (§11); mode 0700. */
  readonly secretsDir: string;
  /**
   * A sandboxed vendor CLI's copy of the person's shared login, kept in step with it
   * (harness/cli-host/login-mirror.ts).
   */
  loginMirror(agentId: string): string;
  /** The Unix socket a harness listens on for the answer to one secret request. */
  secretSocket(requestId: string): string;
  /** An empty file `flotilla deny` leaves to revoke a live grant. */
  secretRevoke(requestId: string): string;
  /** Sandboxed agents' doors (inbox/door.ts); mode 0700, hidden inside every sandbox. */
  readonly doorsDir: string;
  /** The Unix socket a sandboxed agent's harness listens on for its commands' `flotilla send`. */
  door(agentId: string): string;
  /** The shim host's socket (shim-host/server.ts), among the doors: hidden in every sandbox. No agent id begins `_`. */
  readonly shimHostSocket: string;
  /** A running shim host's start time, named by its pid (fleet/shim-hosts.ts): its children act as their agent. */
  shimHostPid(pid: number): string;
  /**
   * One empty file per ended agent a person has looked at since it failed: it no longer needs them (`flotilla next`,
   * the dashboard).
   */
  readonly seenDir: string;
  seen(agentId: string): string;
  /** Schedules added with `flotilla schedule add` (`state/schedules/<name>.json`; src/schedule/). */
  readonly schedulesDir: string;
  schedule(name: string): string;
  /** What the scheduler remembers of a schedule: cursor, last run, queued slots, today's spend. */
  scheduleState(name: string): string;
  /** One O_EXCL file per fired slot (`<name>.fired/<epoch ms>`): a slot fires at most once. */
  scheduleFired(name: string): string;
  /** Present while a schedule is paused (`flotilla schedule pause`). */
  schedulePaused(name: string): string;
  /** What the running scheduler sees of every schedule (next fire, last result), for `status` and the dashboard. */
  readonly scheduleView: string;
  /** The scheduler's lock: a Unix socket bound by the one scheduler of the fleet root. */
  readonly schedulerSocket: string;
  /** Who holds the scheduler lock (pid, since), for the one that waits. */
  readonly schedulerInfo: string;
  /** Task boards (src/tasks/): one folder per board under `state/boards/`. */
  readonly boardsDir: string;
  board(name: string): BoardPaths;
  /** File leases (src/leases/): one JSON file per repository, `state/leases/<key>.json`. */
  readonly leasesDir: string;
  leaseFile(checkoutKey: string): string;
  /** One writer at a time per repository's leases (src/fleet/file-lock.ts). */
  leaseLock(checkoutKey: string): string;
  /** One writer at a time per record (src/fleet/file-lock.ts). */
  recordLock(id: string): string;
  /** One `flotilla up` at a time per fleet. */
  readonly upLock: string;
}

/** One task board's files (docs/architecture.md, "Task boards"). */
export interface BoardPaths {
  readonly name: string;
  readonly dir: string;
  /** One JSON file per task, replaced atomically. */
  readonly tasksDir: string;
  task(id: string): string;
  /** One empty file per task that may not be finished yet, named so a sorted readdir is the claim order. */
  readonly activeDir: string;
  /** One empty file per task that may be claimed right now (a superset, like the live index). */
  readonly claimedDir: string;
  /** One writer at a time per board (src/fleet/file-lock.ts). */
  readonly lock: string;
  claimed(id: string): string;
  /** `<status> <id>` per finished task, appended (a reader keeps each id's last line). */
  readonly endedLog: string;
  /** The last task number handed out (`t<n>`). */
  readonly seqFile: string;
}

/** `slots/tree-<root>`: the prefix lets gc tell a tree's spawn count from a slot. */
export const TREE_SPAWNS_PREFIX = 'tree-';

export function layoutFor(root: string, project = dirname(resolve(root))): Layout {
  const r = resolve(root);
  const state = join(r, 'state');
  const registryDir = `${state}/agents`;
  const inboxRoot = `${state}/inbox`;
  const transcriptsDir = `${state}/transcripts`;
  const outputDir = `${state}/output`;
  const logsDir = `${state}/logs`;
  const worktreesDir = `${state}/worktrees`;
  const liveIndexDir = `${state}/index/live`;
  const treesDir = `${state}/index/trees`;
  // The paths `status`, the budget check and delivery build once per agent are joined by hand:
  // path.join normalizes character by character, ~10 µs a call in a fresh process, and 100
  // rows of status built hundreds of them (docs/decisions.md, "Cost against the fleet's history"). Ids never hold '/'
  // (ID_PATTERN). So is every fixed path under `state` (normalized by join, never '/'): ~0.3 ms of each command (§14).
  return {
    root: r,
    project: resolve(project),
    configFile: join(r, 'config.yaml'),
    agentsDir: join(r, 'agents'),
    state,
    registryDir,
    registryTmp: `${registryDir}/.tmp`,
    inboxRoot,
    transcriptsDir,
    outputDir,
    logsDir,
    auditFile: `${state}/audit.jsonl`,
    auditCursor: `${state}/audit-sent.json`,
    slotsDir: `${state}/slots`,
    worktreesDir,
    markersDir: `${state}/markers`,
    registryFile: (id) => `${registryDir}/${id}.json`,
    taskFile: (id) => join(state, 'tasks', `${id}.md`),
    runtimeDir: (id) => join(state, 'runtimes', id),
    marker: (name) => join(state, 'markers', name),
    children: (parentId) => join(state, 'children', parentId),
    indexDir: `${state}/index`,
    liveIndexDir,
    liveIndex: (id) => `${liveIndexDir}/${id}`,
    finishingDir: `${state}/index/finishing`,
    finishing: (id) => join(state, 'index', 'finishing', id),
    indexMarker: `${state}/index/built-v1`,
    endedLog: `${state}/index/ended.log`,
    treeUsage: (rootId) => `${treesDir}/${rootId}.usage`,
    configCache: `${state}/index/config-cache.json`,
    worktreeStatusCache: `${state}/index/worktree-status`,
    reviewBranchCache: `${state}/index/review-branches.json`,
    inPlaceStandingCache: `${state}/index/in-place-standing.json`,
    inbox: (id) => `${inboxRoot}/${id}`,
    outbox: `${state}/outbox`,
    hostBeat: `${state}/host-beat`,
    hostSteady: `${state}/host-steady.json`,
    unpublished: `${state}/unpublished`,
    busGcOwed: `${state}/bus-gc`,
    transcript: (id) => join(transcriptsDir, `${id}.jsonl`),
    transcriptMeta: (id) => join(transcriptsDir, `${id}.meta.json`),
    output: (id) => join(outputDir, `${id}.md`),
    taskOutput: (id, task) => join(outputDir, `${id}.tasks`, `${task}.md`),
    taskResult: (id, task) => join(outputDir, `${id}.tasks`, `${task}.json`),
    log: (id) => join(logsDir, `${id}.log`),
    worktree: (id) => join(worktreesDir, id),
    inPlaceGitDir: (id) => join(state, 'git-dirs', id),
    projectMemory: (name) => join(r, 'agent-memory', name),
    localMemory: (name) => join(r, 'agent-memory-local', name),
    approvalAnswer: (requestId) => join(state, 'approvals', `${requestId}.answer`),
    stopHookMarker: (agentId) => join(state, 'hooks', `${agentId}.stop`),
    treeSpawns: (rootId) => join(state, 'slots', `${TREE_SPAWNS_PREFIX}${rootId}`),
    secretsDir: `${state}/secrets`,
    loginMirror: (agentId) => join(state, 'secrets', 'logins', agentId),
    secretSocket: (requestId) => join(state, 'secrets', `${requestId}.sock`),
    secretRevoke: (requestId) => join(state, 'secrets', `${requestId}.revoke`),
    doorsDir: `${state}/doors`,
    door: (agentId) => join(state, 'doors', `${agentId}.sock`),
    shimHostSocket: `${state}/doors/_shim-host.sock`,
    shimHostPid: (pid) => join(state, 'doors', `_shim-host.${pid}.pid`),
    seenDir: `${state}/seen`,
    seen: (agentId) => join(state, 'seen', agentId),
    schedulesDir: `${state}/schedules`,
    schedule: (name) => join(state, 'schedules', `${name}.json`),
    scheduleState: (name) => join(state, 'schedules', `${name}.state.json`),
    scheduleFired: (name) => join(state, 'schedules', `${name}.fired`),
    schedulePaused: (name) => join(state, 'schedules', `${name}.paused`),
    schedulerSocket: `${state}/scheduler.sock`,
    schedulerInfo: `${state}/scheduler.json`,
    scheduleView: `${state}/scheduler-view.json`,
    boardsDir: `${state}/boards`,
    board: (name) => boardPaths(join(state, 'boards', name), name),
    leasesDir: `${state}/leases`,
    leaseFile: (key) => join(state, 'leases', `${key}.json`),
    leaseLock: (key) => join(state, 'leases', `${key}.lock`),
    recordLock: (id) => `${registryDir}/.tmp/${id}.lock`,
    upLock: `${state}/up.lock`,
  };
}

function boardPaths(dir: string, name: string): BoardPaths {
  const tasksDir = `${dir}/tasks`;
  const claimedDir = `${dir}/claimed`;
  return {
    name,
    dir,
    tasksDir,
    task: (id) => `${tasksDir}/${id}.json`,
    activeDir: `${dir}/active`,
    claimedDir,
    claimed: (id) => `${claimedDir}/${id}`,
    endedLog: `${dir}/ended.log`,
    seqFile: `${dir}/seq`,
    lock: `${dir}/.lock`,
  };
}

/** The project directory: the git top-level above `cwd` (found without running git), else `cwd`. */
export function findProject(cwd: string): string {
  let dir = resolve(cwd);
  for (;;) {
    if (isCheckoutTop(dir)) return dir;
    const up = dirname(dir);
    if (up === dir) return resolve(cwd);
    dir = up;
  }
}

/**
 * Finds the fleet root: `--root`, then `FLOTILLA_ROOT`, then `<project>/.flotilla`.
 */
export function resolveLayout(opts: { root?: string | undefined; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Layout {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  const explicit = opts.root ?? env.FLOTILLA_ROOT;
  if (explicit) {
    const root = resolve(cwd, explicit);
    return layoutFor(root, findProject(dirname(root)));
  }
  const project = findProject(cwd);
  return layoutFor(join(project, '.flotilla'), project);
}

/**
 * Creates `state/` and its folders on first use, and git-ignores runtime state with a
 * `.flotilla/.gitignore` so a person's own `.gitignore` is never edited.
 */
export function ensureState(layout: Layout): void {
  if (existsSync(layout.registryTmp)) return;
  for (const dir of [
    layout.registryTmp,
    layout.inboxRoot,
    layout.transcriptsDir,
    layout.outputDir,
    layout.logsDir,
    layout.slotsDir,
    layout.markersDir,
    join(layout.state, 'tasks'),
  ]) {
    mkdirSync(dir, { recursive: true });
  }
  ensureGitignore(layout);
}

/** What `.flotilla/.gitignore` held before it ignored itself: such a file is ours to update. */
const OLD_GITIGNORE = 'state/\nagent-memory-local/\n';
/**
 * Runtime state, local memory, and this file itself: a fleet that only ran leaves `git
 * status` as it found it (docs/decisions.md), while `agents/`, `config.yaml` and
 * `agent-memory/` stay visible for a team to commit.
 */
const GITIGNORE =
  '# Made by Flotilla: runtime state is never committed. This file ignores itself.\n.gitignore\nstate/\nagent-memory-local/\n';

/**
 * Writes `.flotilla/.gitignore` when missing, or when it is the older one Flotilla wrote; a person's own is left alone.
 */
export function ensureGitignore(layout: Pick<Layout, 'root'>): void {
  const ignore = join(layout.root, '.gitignore');
  let current: string | undefined;
  try {
    current = readFileSync(ignore, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === undefined || current === OLD_GITIGNORE) writeFileSync(ignore, GITIGNORE);
}

/** User-scope paths (§1): `$XDG_CONFIG_HOME/flotilla/`, `~/.flotilla/agent-memory/` and `$XDG_CACHE_HOME/flotilla/`. */
export function userPaths(env: NodeJS.ProcessEnv = process.env): {
  configDir: string;
  /** The CLI's compiled-code cache (src/cli/compile-cache.ts). It runs on the host: never writable by a sandbox. */
  cacheDir: string;
  configFile: string;
  agentsDir: string;
  claudeAgentsDir: string;
  memory(name: string): string;
} {
  const home = homeDir(env);
  const configDir = join(env.XDG_CONFIG_HOME || join(home, '.config'), 'flotilla');
  return {
    configDir,
    cacheDir: userCacheDir(env),
    configFile: join(configDir, 'config.yaml'),
    agentsDir: join(configDir, 'agents'),
    claudeAgentsDir: join(home, '.claude', 'agents'),
    memory: (name) => join(home, '.flotilla', 'agent-memory', name),
  };
}

/**
 * `userPaths().cacheDir` alone: every command reads its code caches there first (cli/compile-cache.ts), and needs none
 * of the other paths, ~5 joins (§14).
 */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homeDir(env), '.cache'), 'flotilla');
}

// node:os only without HOME: its load is ~0.3 ms of every `flotilla send` (§14).
function homeDir(env: NodeJS.ProcessEnv): string {
  return env.HOME ?? process.getBuiltinModule('node:os').homedir();
}
