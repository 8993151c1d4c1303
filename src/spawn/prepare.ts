import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { audit } from '../audit/audit.js';
import type { Config } from '../config/schema.js';
import type { Definition } from '../definitions/types.js';
import { agentIdBase } from '../definitions/normalize.js';
import { FlotillaError, refusal } from '../errors.js';
import { admitSpawn } from '../fleet/caps.js';
import { assertValidId, newAgentId } from '../fleet/ids.js';
import { findParentAgent, forgedParentRefusal } from '../fleet/lineage.js';
import type { AgentRecord } from '../fleet/record.js';
import { liveRecords } from '../fleet/live.js';
import { createRecord, readRecord } from '../fleet/registry.js';
import { selfHost } from '../hosts/self.js';
import type { SlotReservation } from '../fleet/slots.js';
import type { Layout } from '../layout/layout.js';
import { DEMO_SCRIPT } from '../layout/package.js';
import { isScripted, resolveModelSpec, type ResolvedModel } from '../model/spec.js';
import { applyFleetRetention } from '../transcript/fleet-retention.js';
import type { RuntimeName } from '../runtimes/types.js';
import { keepLineage, treeLimits, type RemoteLineage } from '../hosts/lineage.js';
import { fleetBudgetRefusal } from './budget.js';
import { childPolicy } from './child-policy.js';
import { checkCwd, checkDemoReady, checkModel } from './preflight.js';
import { checkBoardName, DEFAULT_BOARD } from '../tasks/task.js';
import { contextFromParent, type ContextMode } from './context.js';

/**
 * Everything that happens before an agent's process opens (§5.1-5.2): who the parent is,
 * which definition, no escalation, the model, the budget, the caps — then the registry
 * record (status `spawning`) and the task file. Any refusal leaves nothing behind but an
 * audit line. Shared by `spawn-agent` and a `flotilla run` started by a person or a shell.
 */

export interface SpawnRequest {
  agent?: string | undefined;
  id?: string | undefined;
  prompt: string;
  cwd?: string | undefined;
  worktree?: boolean | undefined;
  mode: AgentRecord['mode'];
  background?: boolean | undefined;
  context?: ContextMode | undefined;
  model?: string | undefined;
  resumedFrom?: string | null | undefined;
  /** Wait in line for a running slot instead of being refused (`spawn-agent --queue`); told when it starts waiting. */
  queue?: { onWait?: () => void | Promise<void>; signal?: AbortSignal } | undefined;
  /** Who runs it (§13): Flotilla's harness (default) or a vendor CLI under a shim. */
  runtime?: RuntimeName | undefined;
  /** A scheduled run (src/schedule/): a root spawned by the scheduler, with its schedule's name, run id and slot. */
  schedule?: { name: string; runId: string; slot: string; notify: string | null } | undefined;
  /** Overrides the definition's wall-clock limit (a schedule's `timeout`). */
  timeoutSecs?: number | undefined;
  /** The task board it works from (§15): default the definition's, its parent's, a person's $FLOTILLA_BOARD. */
  board?: string | undefined;
  /** Claim work from the board when idle (§15); default the definition's `auto_claim`. */
  autoClaim?: boolean | undefined;
  /** `--host local`: open it here even when its definition names a `host:` (§17). */
  here?: boolean | undefined;
}

/** The code of the refusal that says a definition's `host:` is elsewhere: `flotilla spawn` then spawns there. */
export const DEFINITION_HOST = 'definition-host';

/** A definition whose `host:` names another machine (§17): where to open it instead. */
export class DefinitionElsewhere extends FlotillaError {
  constructor(
    readonly definition: string,
    readonly host: string,
  ) {
    super(
      `spawn refused: definition '${definition}' opens on host '${host}' (its host:) — run spawn-agent --agent ${definition} from a shell to open it there, or --host local to open it here`,
      { code: DEFINITION_HOST },
    );
  }
}

export interface PreparedSpawn {
  record: AgentRecord;
  definition: Definition;
  /** The running slot reserved for the child: hand `slot.envValue` to it as FLOTILLA_SLOT. */
  slot: SlotReservation;
}

export interface PrepareOptions {
  /** The calling process (lineage is walked from here). */
  pid?: number;
  env?: NodeJS.ProcessEnv;
  /** Force the parent (a harness spawning for its own model or pane). */
  parent?: AgentRecord | null;
  /** A child of an agent on another host (§17.5): its parent's record and the tree's limits, from a trusted caller. */
  lineage?: RemoteLineage;
}

export async function prepareSpawn(
  layout: Layout,
  config: Config,
  req: SpawnRequest,
  opts: PrepareOptions = {},
): Promise<PreparedSpawn> {
  const env = opts.env ?? process.env;
  let parent: AgentRecord | null;
  if (opts.lineage) parent = opts.lineage.parent;
  else if (opts.parent !== undefined) parent = opts.parent;
  else {
    const lineage = findParentAgent(layout, { ...(opts.pid === undefined ? {} : { pid: opts.pid }), env });
    if (lineage.forged) throw refused(layout, lineage.parent, req, forgedParentRefusal(lineage.forged));
    parent = lineage.parent;
  }
  try {
    return await prepareFor(
      layout,
      opts.lineage ? { ...config, limits: treeLimits(config.limits, opts.lineage) } : config,
      req,
      parent,
      env,
      opts.lineage,
    );
  } catch (err) {
    throw refused(layout, parent, req, err);
  }
}

function refused(layout: Layout, parent: AgentRecord | null, req: SpawnRequest, err: unknown): unknown {
  if (err instanceof FlotillaError && err.code !== DEFINITION_HOST) {
    audit(layout, {
      event: 'spawn_refused',
      agent: parent?.id ?? 'human',
      definition: req.agent ?? null,
      code: err.code,
      reason: err.message,
    });
  }
  return err;
}

async function prepareFor(
  layout: Layout,
  config: Config,
  req: SpawnRequest,
  parent: AgentRecord | null,
  env: NodeJS.ProcessEnv,
  lineage?: RemoteLineage,
): Promise<PreparedSpawn> {
  const { definition, loaded } = await chooseDefinition(layout, config, req, env, lineage);
  const id = newChildId(layout, req, definition);
  const rootId = parent?.rootId ?? id;
  const { policy, maxTurns, timeoutSecs } = childPolicy(definition, config, parent, req.timeoutSecs);
  const { runtime, resolved, model } = await chooseModel(layout, config, req, definition, parent, env, loaded);
  // Everything that would only fail once the window is open is refused here: a window that opens only to fail leaves a
  // person a mess to clean up.
  // A parent on another host has its folder there: the child works where this host's spawn runs.
  const cwd = resolve(req.cwd ?? (lineage ? undefined : parent?.cwd) ?? process.cwd());
  checkCwd(cwd);
  if (resolved) {
    await checkModel(resolved, config, env, cwd);
    checkDemoReady(resolved, loaded);
  }
  // The live records only (the indexes of src/fleet/registry-index.ts): spawn costs the same in a long-lived fleet.
  const live = liveRecords(layout);
  // The tree's agents on every host (§11); on maildir this host's index only, and no bus code loads.
  const broke = await fleetBudgetRefusal(layout, config, rootId, { unreachable: 'refuse', live });
  if (broke) throw broke;
  // On a bus with fleet-wide caps (§18) the slot and the tree's spawn are also the fleet's; a maildir fleet loads no
  // bus code here (§14).
  const caps =
    config.fleet.bus === 'maildir' ? undefined : (await import('../bus/open.js')).busFor(layout, config).caps;
  const admission = await admitSpawn(layout, config.limits, { id, parent, rootId }, live, req.queue, caps);

  try {
    let task = req.prompt;
    if (parent && req.context && req.context !== 'none')
      task = (await contextFromParent(layout, parent, req.context, config.agents.context_window_turns)) + task;
    const now = new Date().toISOString();
    const record = createRecord(layout, {
      id,
      name: definition.name,
      parentId: parent?.id ?? null,
      rootId,
      depth: admission.depth,
      pid: null,
      pidStartTime: null,
      tmux: null,
      cwd,
      worktree: null,
      mode: req.mode,
      status: 'spawning',
      exitReason: null,
      createdAt: now,
      startedAt: null,
      finishedAt: null,
      turns: 0,
      maxTurns,
      timeoutSecs,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: null },
      lastLine: '',
      model: model.spec,
      scripted: runtime === 'flotilla' && isScripted(model.spec),
      runtime,
      permissionMode: policy.permissionMode,
      effectivePolicy: { tools: policy.tools, permissionMode: policy.permissionMode, secrets: policy.secrets },
      background: req.background ?? definition.background,
      resumedFrom: req.resumedFrom ?? null,
      spawnedBy: parent ? 'agent' : req.schedule ? 'cron' : 'human',
      slot: admission.slot.index,
      schedule: req.schedule ?? null,
      board: teamBoard(req, definition, parent, env),
      autoClaim: req.autoClaim ?? definition.autoClaim ?? false,
      host: selfHost(config.fleet, env),
    });
    await announceSpawn(layout, config, { record, task, parent, lineage, req, definition });
    return { record, definition, slot: admission.slot };
  } catch (err) {
    admission.slot.release();
    admission.place.release();
    throw err;
  }
}

/** The definition asked for (or config's default); one whose `host:` is another machine is opened there instead. */
async function chooseDefinition(
  layout: Layout,
  config: Config,
  req: SpawnRequest,
  env: NodeJS.ProcessEnv,
  lineage: RemoteLineage | undefined,
) {
  const { loadDefinitions, pickDefinition } = await import('../definitions/load.js');
  const loaded = await loadDefinitions({ layout, config, env });
  const name = req.agent ?? config.agents.default;
  let definition: Definition;
  try {
    definition = pickDefinition(loaded, name);
  } catch (err) {
    const kind = err instanceof FlotillaError ? err.code : 'unknown-definition';
    throw refusal(kind, `spawn refused: ${(err as Error).message}`, { definition: name });
  }
  // Its `host:` (§17) is followed by the command line's spawn; a spawn that came from another host opens where it
  // arrived.
  if (definition.host && !req.here && !lineage && definition.host !== selfHost(config.fleet, env)) {
    throw new DefinitionElsewhere(definition.name, definition.host);
  }
  return { definition, loaded };
}

/** The `--id` asked for, when free and valid, or a new one from the definition's name. */
function newChildId(layout: Layout, req: SpawnRequest, definition: Definition): string {
  if (req.id !== undefined) {
    assertValidId(req.id);
    if (readRecord(layout, req.id))
      throw new FlotillaError(`agent id '${req.id}' is already in use — choose another --id`, { code: 'id-taken' });
  }
  // tmux reads '.' as a separator: ids from dotted (Claude-compatible) names use '-'.
  return req.id ?? newAgentId(agentIdBase(definition.name));
}

/**
 * Who runs the agent (§13), refused here when that runtime cannot start, and its model. A
 * vendor CLI picks its own model unless one is named, by the flag or the definition
 * (`claude:opus`; `inherit` names none); a harness resolves as §6 says.
 */
async function chooseModel(
  layout: Layout,
  config: Config,
  req: SpawnRequest,
  definition: Definition,
  parent: AgentRecord | null,
  env: NodeJS.ProcessEnv,
  loaded: { trust: { trusted: boolean } },
): Promise<{ runtime: RuntimeName; resolved: ResolvedModel | undefined; model: { spec: string } }> {
  const runtime = req.runtime ?? definition.runtime ?? 'flotilla';
  if (runtime !== 'flotilla') {
    const { runtimeRefusal } = await import('../runtimes/index.js');
    const refused = await runtimeRefusal(runtime, env, config.runtimes[runtime], {
      dir: layout.project,
      trusted: loaded.trust.trusted,
    });
    if (refused) throw refused;
  }
  const resolved =
    runtime === 'flotilla'
      ? resolveModelSpec({
          flag: req.model,
          definition: definition.model,
          parent: parent?.runtime === 'flotilla' ? parent.model : undefined,
          config,
          env,
          demoScript: DEMO_SCRIPT,
        })
      : undefined;
  const vendorModel =
    req.model ??
    (definition.model?.trim() && definition.model.trim() !== 'inherit' ? definition.model.trim() : undefined);
  return { runtime, resolved, model: resolved ?? { spec: vendorModel ? `${runtime}:${vendorModel}` : runtime } };
}

/**
 * A new record made known: on a bus to the other hosts, its task file written, its parent's
 * children list (or a remote parent's lineage) kept, the `spawn` audit line, and retention run.
 */
async function announceSpawn(
  layout: Layout,
  config: Config,
  s: {
    record: AgentRecord;
    task: string;
    parent: AgentRecord | null;
    lineage: RemoteLineage | undefined;
    req: SpawnRequest;
    definition: Definition;
  },
): Promise<void> {
  const { record, parent, lineage, req } = s;
  const id = record.id;
  // On a bus the other hosts see it from its first state (§18); the CLI's exit waits for the put.
  if (config.fleet.bus !== 'maildir')
    void (await import('../bus/open.js')).busFor(layout, config).records.publish(record);
  mkdirSync(dirname(layout.taskFile(id)), { recursive: true });
  writeFileSync(layout.taskFile(id), s.task);
  // Before its harness starts: it admits itself, and later addresses its completion, by it.
  if (lineage) keepLineage(layout, id, lineage);
  else if (parent) {
    mkdirSync(layout.children(parent.id), { recursive: true });
    writeFileSync(join(layout.children(parent.id), id), '');
  }
  audit(layout, {
    event: 'spawn',
    agent: id,
    parent: parent?.id ?? (req.schedule ? 'cron' : 'human'),
    ...(lineage ? { parent_host: lineage.host } : {}),
    definition: s.definition.name,
    depth: record.depth,
    model: record.model,
    mode: req.mode,
    ...(req.schedule ? { spawn_site: 'cron', schedule: req.schedule.name, run_id: req.schedule.runId } : {}),
  });
  // Retention (§8) runs on each spawn; the new record is not terminal, so it is never pruned.
  try {
    applyFleetRetention(layout, config);
  } catch {
    /* retention never fails a spawn */
  }
}

/**
 * The board a new agent works from (§15): its spawn's, its definition's, its parent's, and
 * for a person's spawn `$FLOTILLA_BOARD`; null is the fleet's board.
 */
function teamBoard(
  req: SpawnRequest,
  definition: Definition,
  parent: AgentRecord | null,
  env: NodeJS.ProcessEnv,
): string | null {
  const named = req.board ?? definition.board ?? (parent ? parent.board : env.FLOTILLA_BOARD?.trim() || null);
  return named === null || named === DEFAULT_BOARD ? null : checkBoardName(named);
}
