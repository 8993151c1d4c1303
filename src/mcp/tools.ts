import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import { MCP_FLEET_TOOLS } from '../policy/tool-table.js';
import { TOOLS } from '../tools/registry.js';
import type { ToolOps } from '../tools/spec.js';
import type { TaskToolOps } from '../tools/task-board.js';
import type { Tool } from '../tools/types.js';
import { actorId, type McpIdentity } from './identity.js';

/**
 * The fleet tools an MCP client is offered (§13): the tool table's rows marked `mcp`
 * (policy/tool-table.ts; the task board's among them, §15), the registry's tools (tools/registry.ts)
 * made as the harness makes them, with operations bound to the client's identity — an agent's own fleet ops (its
 * subtree, its inbox, mail from its id), or a person's (the whole fleet, the human inbox).
 * An agent is offered only the fleet tools its effective policy allows. `env` is what its spawns and merges take
 * (definitions, keys, the board): the agent's commands' own where the shim serves it (harness/door-send.ts).
 *
 * A vendor CLI waits for this server before its first turn, and a tool is called seldom: each
 * operation's modules (spawning, mail, leases, the board, merging) load on its first call, not
 * before the server answers (§14). The tools themselves, which tools/list describes, are made now.
 */
export function mcpTools(
  layout: Layout,
  config: Config,
  identity: McpIdentity,
  env: NodeJS.ProcessEnv = process.env,
): Tool[] {
  const me = actorId(identity);
  const agent = identity.kind === 'agent' ? identity.record : undefined;
  const cwd = agent ? agent.cwd : process.cwd();
  const send: ToolOps['send'] = {
    async send(m) {
      const { sendTo, sentSummary } = await import('../lifecycle/send.js');
      return sentSummary(
        await sendTo(
          layout,
          m.to,
          {
            from: me,
            kind: 'message',
            body: m.body,
            ...(m.summary ? { summary: m.summary } : {}),
            ...(m.priority ? { priority: m.priority } : {}),
            ...(m.inReplyTo ? { in_reply_to: m.inReplyTo } : {}),
          },
          { maxBodyBytes: config.inbox.max_body_bytes, allWho: config.inbox.broadcast_all },
        ),
      );
    },
  };
  // No transcript records what an MCP client saw, so reading is the claim (rename new/ → cur/,
  // which exactly one reader wins); peek leaves the mail unread.
  const inbox: ToolOps['inbox'] = {
    async read(peek) {
      const [{ list }, { claim }, { formatForModel, sortForReader }, { predecessors }] = await Promise.all([
        import('../inbox/read.js'),
        import('../inbox/claim.js'),
        import('../inbox/surface.js'),
        import('../inbox/adopt.js'),
      ]);
      // A resumed agent reads the mail it adopted, addressed to the agents it continues (§8).
      const aliases = agent ? predecessors(layout, agent) : [];
      const items = sortForReader(
        (await list(layout, me, { maxBodyBytes: config.inbox.max_body_bytes, aliases })).map((i) => ({
          ...i.message,
          item: i,
        })),
      ).map((m) => m.item);
      if (items.length === 0) return 'No unread messages.';
      if (!peek) for (const i of items) await claim(layout, me, i);
      return formatForModel(items.map((i) => i.message));
    },
  };
  const fleet = onFirstCall<NonNullable<ToolOps['fleet']>>(
    async () => {
      const { fleetOpsFor, personFleetOps } = await import('../spawn/ops.js');
      if (!agent) return personFleetOps(layout, config);
      const ops = fleetOpsFor(layout, config, agent, env);
      // The answers wait_for_agents returns are the agent's model's: their completions are read, never typed
      // into its CLI again as mail (docs/decisions.md "Handed on is read").
      return {
        ...ops,
        async wait(ids, opts) {
          const r = await ops.wait(ids, opts);
          await (await import('../lifecycle/handed-on.js')).markHandedOn(layout, agent.id, r.results);
          return r;
        },
      };
    },
    { spawn: true, list: true, wait: true, cancel: true },
  );
  const leases = onFirstCall<NonNullable<ToolOps['leases']>>(
    async () => (await import('../team-store/lease-ops.js')).leaseOperations(layout, me, cwd),
    { take: true, release: true, list: true },
  );
  // The caller's board (§15): an agent's own, a person's $FLOTILLA_BOARD, else the fleet's.
  const board = (agent ? agent.board : process.env.FLOTILLA_BOARD?.trim() || null) ?? 'fleet';
  const tasks: TaskToolOps = {
    defaultBoard: board,
    ...onFirstCall<Omit<TaskToolOps, 'defaultBoard'>>(
      async () => (await import('../team-store/tool-ops.js')).taskToolOps(layout, me, board),
      { create: true, list: true, claim: true, update: true, wait: true },
    ),
  };
  const merge = onFirstCall<NonNullable<ToolOps['merge']>>(
    async () => {
      const { mergeWorkOps, personMergeWorkOps } = await import('../work/merge-ops.js');
      return agent ? mergeWorkOps(layout, agent, env) : personMergeWorkOps(layout, env);
    },
    { merge: true },
  );
  const all = TOOLS.filter((t) => MCP_FLEET_TOOLS.includes(t.name)).flatMap(
    (t) => t.create({ send, inbox, fleet, merge, leases, tasks }) ?? [],
  );
  if (!agent) return all;
  const allowed = new Set(agent.effectivePolicy.tools);
  return all.filter((t) => allowed.has(t.name));
}

/**
 * Operations whose module loads on the first call of any of them: `made` loads it and makes them
 * (once); `methods` names every one, so an operation added to the interface is a type error here
 * until it is named.
 */
function onFirstCall<T extends { [K in keyof T]: (...args: never[]) => Promise<unknown> }>(
  made: () => Promise<T>,
  methods: { [K in keyof T]: true },
): T {
  let ops: Promise<T> | undefined;
  const out: Partial<Record<keyof T, unknown>> = {};
  for (const name of Object.keys(methods) as (keyof T)[]) {
    out[name] = async (...args: never[]) => {
      const real = await (ops ??= made());
      return real[name](...args);
    };
  }
  return out as T;
}
