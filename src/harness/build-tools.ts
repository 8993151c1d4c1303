import { mkdirSync } from 'node:fs';
import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { isAbsolute, relative } from 'node:path';
import { userPaths } from '../layout/layout.js';
import { effectiveSandbox } from '../tools/sandbox-mode.js';
import { bubblewrapArgv, bubblewrapUserNamespace, pidNamespaceArgv, tmuxHiding } from '../tools/sandbox.js';
import { credentialPaths } from '../tools/sandbox-credentials.js';
import { tmuxSocketPaths } from '../tmux/sockets.js';
import { gitWrites, inPlaceOf, withGitWrites } from '../tools/git-writable.js';
import { busCredentialVars, commandEnvironment, holdsBusCredentials, providerKeyVars } from '../tools/command-env.js';
import { PACKAGE_ROOT } from '../layout/package.js';
import { agentHostPaths } from './host-paths.js';
import { trackToolGroups } from '../lifecycle/tool-groups.js';
import { TOOLS } from '../tools/registry.js';
import type { ToolOps, WorkspaceOptions } from '../tools/spec.js';
import type { Tool, ToolResult } from '../tools/types.js';
import type { FileClaim } from '../tools/file-claim.js';
import type { LeaseOperations } from '../tools/lease-paths.js';
import { redact, redactValue } from '../secrets/redact.js';
import type { SecretBroker } from './secret-broker.js';
import type { FleetOps } from '../tools/fleet-ops.js';
import type { MergeWorkOperations } from '../tools/merge-work.js';
import { DOOR_BUS_ENV, DOOR_ENV } from '../inbox/door.js';
import { DEFAULT_BOARD } from '../tasks/task.js';
import { openAgentDoor, sendAs } from './door-send.js';
import { sentSummary } from '../lifecycle/send.js';

/** What buildTools needs of the agent's harness. */
export interface BuildToolsOptions {
  layout: Layout;
  config: Config;
  record: AgentRecord;
  env: NodeJS.ProcessEnv;
  memoryDir: string | undefined;
  inbox: { takeForTool(peek: boolean): Promise<string>; returned(completions: { from: string; task: number }[]): void };
  log: Log;
  /** `permissions.env` of the definition: provider keys its commands may see. */
  passEnv?: readonly string[];
  /**
   * The agent's secrets (§11), when its definition lists keys: adds request_secret and lends grants to shell commands.
   */
  secrets?: SecretBroker;
}

/**
 * The tools one agent is shown (§6): the registry's tools (tools/registry.ts), made from this
 * agent's operations and filtered to its effective policy (§7), with granted secrets redacted
 * from every output (§11). The loop runs each call through the one tool wrapper
 * (`tools/run-tool.ts`), which cuts output only after this redaction, so a cut never leaves
 * half a value.
 */
export async function buildTools(opts: BuildToolsOptions): Promise<Tool[]> {
  const { layout, config, record: rec } = opts;
  const send = sendAs(layout, config, rec);
  const workspace = await workspaceOptions(opts, send);
  const broker = opts.secrets;
  const { taskToolOps } = await import('../team-store/tool-ops.js');
  const ops: ToolOps = {
    workspace,
    send: {
      async send(m) {
        return sentSummary(
          await send({ to: m.to, body: m.body, summary: m.summary, priority: m.priority, inReplyTo: m.inReplyTo }),
        );
      },
    },
    inbox: { read: (peek) => opts.inbox.takeForTool(peek) },
    fleet: await fleetOps(layout, config, rec, opts.inbox),
    merge: lazyMergeOperations(layout, rec, opts.env),
    leases: lazyLeaseOperations(layout, rec.id, rec.cwd),
    // The board it works from: the one it was spawned for, else the fleet's (§15).
    tasks: taskToolOps(layout, rec.id, rec.board ?? DEFAULT_BOARD),
    ...(broker
      ? {
          secrets: {
            keys: rec.effectivePolicy.secrets,
            request: (key: string, reason: string | undefined, signal: AbortSignal) =>
              broker.request(key, reason, signal),
          },
        }
      : {}),
  };
  const allowed = new Set(rec.effectivePolicy.tools);
  return TOOLS.filter((t) => allowed.has(t.name))
    .flatMap((t) => t.create(ops) ?? [])
    .map((t) => (t.name === 'shell' && broker ? withSecretEnv(t, broker) : redacting(t)));
}

/**
 * The workspace tools' settings for this agent: its folders, its command environment, and the
 * sandbox or pid namespace every command runs in (§11).
 */
async function workspaceOptions(opts: BuildToolsOptions, send: ReturnType<typeof sendAs>): Promise<WorkspaceOptions> {
  const { layout, config, record: rec } = opts;
  // Asked for and missing is a refusal to start, never a silently unsandboxed agent; `auto`
  // without a working bwrap runs unsandboxed, as `up` and the spawn said (tools/sandbox-mode.ts).
  const effective = effectiveSandbox(config, opts.env);
  const bwrap = effective.kind === 'bubblewrap' ? effective.bwrap : undefined;
  const writable = [rec.cwd, ...(opts.memoryDir ? [opts.memoryDir] : [])];
  const { home, installed, readOnly } = agentHostPaths(layout, rec.cwd, opts.env);
  // The compile cache is ours: made now, it is held read-only below even when ~/.cache did not exist.
  if (bwrap) ensureDirQuietly(userPaths(opts.env).cacheDir);
  // The bus's credentials are the harness's: the fleet commands it runs for its agent through
  // the door get them, the agent's own commands never (docs/security-fleet.md "Bus credentials").
  const doorEnv = commandEnvironment(opts.env, { keys: providerKeyVars(config), allow: opts.passEnv ?? [] });
  const baseEnv = commandEnvironment(doorEnv, { never: busCredentialVars(config) });
  // Every command reaches the fleet through its agent's door (inbox/door.ts): its mail in
  // every mode (redacted, `from` the harness's word), and in the sandbox — or wherever the
  // bus needs credentials the command lacks — its fleet commands.
  const door = await openAgentDoor(layout, config, rec, send, { env: doorEnv, writable });
  const viaBus = holdsBusCredentials(config, opts.env) ? { [DOOR_BUS_ENV]: '1' } : {};
  const sandbox = bwrap && {
    writable,
    readOnly,
    network: config.security.sandbox_network,
    bwrap,
    userNamespace: bubblewrapUserNamespace(bwrap),
    hidden: [
      layout.doorsDir,
      layout.secretsDir,
      ...credentialPaths({ home, env: opts.env, extra: config.security.hidden_paths }).hidden,
    ],
    sockets: door ? [door] : [],
  };
  // tmux servers are looked for at each command: one started since the last is hidden too.
  const needed = [...writable, home, PACKAGE_ROOT, ...installed];
  const wrap = sandbox
    ? (argv: string[]) => {
        const tmux = tmuxHiding(tmuxSocketPaths(opts.env), needed);
        // Its own worktree's commits (tools/git-writable.ts), with the branches there now held.
        return bubblewrapArgv(
          withGitWrites(
            { ...sandbox, hidden: [...sandbox.hidden, ...tmux.hidden], covered: tmux.covered },
            gitWrites(rec.worktree, rec.id, inPlaceOf(layout, rec)),
          ),
          argv,
        );
      }
    : (argv: string[]) => pidNamespaceArgv(argv);
  // Inside the fleet root a file tool may write the memory dir, and a --worktree agent's own
  // checkout (state/worktrees/<id>), which is its working folder.
  const ownWorktree = isWithin(rec.cwd, layout.worktreesDir) ? [rec.cwd] : [];
  const within = [...(opts.memoryDir ? [opts.memoryDir] : []), ...ownWorktree];
  return {
    cwd: rec.cwd,
    // With the sandbox on, the file tools write where a sandboxed command could, no more.
    ...(bwrap
      ? { protectedRoots: readOnly, writableWithin: within, writableRoots: writable }
      : { protectedRoots: [layout.root], writableWithin: within }),
    shellTimeoutSecs: config.tools.shell_timeout_secs,
    env: door ? { ...baseEnv, [DOOR_ENV]: door, ...viaBus } : baseEnv,
    maxOutputBytes: config.tools.max_output_bytes,
    wrap,
    track: trackToolGroups(layout, rec.id),
    claim: fileLease(layout, rec.id),
  };
}

/** Every tool's output is redacted (§11) before truncation, so a cut never leaves half a value. */
function redacting(t: Tool): Tool {
  return { ...t, execute: async (input, ctx) => redactResult(await t.execute(input, ctx)) };
}

/**
 * The shell tool with the live grants as environment variables of this one command. The
 * lease lasts until the output is redacted, so a grant that expires mid-command is still
 * replaced in that command's output.
 */
function withSecretEnv(t: Tool, broker: SecretBroker): Tool {
  return {
    ...t,
    execute: async (input, ctx) => {
      const lease = broker.lease();
      try {
        return redactResult(
          await t.execute(input, Object.keys(lease.env).length ? { ...ctx, extraEnv: lease.env } : ctx),
        );
      } finally {
        lease.release();
      }
    },
  };
}

function redactResult(r: ToolResult): ToolResult {
  return { ...r, output: redact(r.output), ...(r.meta ? { meta: redactValue(r.meta) } : {}) };
}

/**
 * The fleet tools' operations for this agent. A completion that wait_for_agents (or
 * spawn_agent with wait) hands to the model is claimed from its inbox, not shown again as
 * mail: otherwise the model would read the same result twice and answer it twice.
 */
async function fleetOps(
  layout: Layout,
  config: Config,
  rec: AgentRecord,
  inbox: { returned(completions: { from: string; task: number }[]): void },
): Promise<FleetOps> {
  const { fleetOpsFor } = await import('../spawn/ops.js');
  const ops = fleetOpsFor(layout, config, rec);
  return {
    ...ops,
    async wait(ids, o) {
      const r = await ops.wait(ids, o);
      inbox.returned(r.results.flatMap((x) => (x.task === null ? [] : [{ from: x.id, task: x.task }])));
      return r;
    },
  };
}

/**
 * write and edit take a lease on the file first (docs/design.md §16): held by this agent for
 * its current task (read from its record: a persistent agent's task moves on), or refused
 * naming the holder. The leases code loads at the first change, not at start.
 */
function fileLease(layout: Layout, id: string): FileClaim {
  return async (path, tool) => {
    const [{ leaseForEdit }, { readRecord }] = await Promise.all([
      import('../team-store/leases.js'),
      import('../fleet/registry.js'),
    ]);
    const task = readRecord(layout, id)?.task ?? null;
    const r = await leaseForEdit(layout, path, id, task, tool);
    if (r.ok) return null;
    const { conflictMessage } = await import('../leases/view.js');
    return conflictMessage(r.conflict, `your ${tool} was not made and the file is unchanged`);
  };
}

/** merge_work's operations (work/merge-ops.ts), loaded at its first call; git runs with the harness's environment. */
function lazyMergeOperations(layout: Layout, rec: AgentRecord, env: NodeJS.ProcessEnv): MergeWorkOperations {
  return {
    merge: async (prefix, o) => (await import('../work/merge-ops.js')).mergeWorkOps(layout, rec, env).merge(prefix, o),
  };
}

/** lease_paths's operations, loaded at its first call. */
export function lazyLeaseOperations(layout: Layout, by: string, cwd: string): LeaseOperations {
  const ops = async () => (await import('../team-store/lease-ops.js')).leaseOperations(layout, by, cwd);
  return {
    take: async (a) => (await ops()).take(a),
    release: async (p) => (await ops()).release(p),
    list: async () => (await ops()).list(),
  };
}

function isWithin(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

function ensureDirQuietly(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    // A read-only home: nothing can be written there from inside either.
  }
}
