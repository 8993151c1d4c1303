import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import { MCP_FLEET_TOOLS } from '../policy/tool-table.js';
import { TOOLS } from '../tools/registry.js';
import type { ToolOps } from '../tools/spec.js';
import type { Tool } from '../tools/types.js';
import { actorId, type McpIdentity } from './identity.js';

/**
 * The fleet tools an MCP client is offered (§13): the tool table's rows marked `mcp`
 * (policy/tool-table.ts; the task board's among them, §15), the registry's tools (tools/registry.ts)
 * made as the harness makes them, with operations bound to the client's identity — an agent's own fleet ops (its
 * subtree, its inbox, mail from its id), or a person's (the whole fleet, the human inbox).
 * An agent is offered only the fleet tools its effective policy allows.
 */
export async function mcpTools(layout: Layout, config: Config, identity: McpIdentity): Promise<Tool[]> {
  const me = actorId(identity);
  const [{ sendTo, sentSummary }, { list }, { claim }, { formatForModel, sortForReader }, { predecessors }] =
    await Promise.all([
      import('../lifecycle/send.js'),
      import('../inbox/read.js'),
      import('../inbox/claim.js'),
      import('../inbox/surface.js'),
      import('../inbox/adopt.js'),
    ]);
  // A resumed agent reads the mail it adopted, addressed to the agents it continues (§8).
  const aliases = identity.kind === 'agent' ? predecessors(layout, identity.record) : [];
  const send: ToolOps['send'] = {
    async send(m) {
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
  const { fleetOpsFor, personFleetOps } = await import('../spawn/ops.js');
  const ops = identity.kind === 'agent' ? fleetOpsFor(layout, config, identity.record) : personFleetOps(layout, config);
  const { leaseOperations } = await import('../team-store/lease-ops.js');
  const leases = leaseOperations(layout, me, identity.kind === 'agent' ? identity.record.cwd : process.cwd());
  const { taskToolOps } = await import('../team-store/tool-ops.js');
  // The caller's board (§15): an agent's own, a person's $FLOTILLA_BOARD, else the fleet's.
  const board = identity.kind === 'agent' ? identity.record.board : process.env.FLOTILLA_BOARD?.trim() || null;
  const tasks = taskToolOps(layout, me, board ?? 'fleet');
  const { mergeWorkOps, personMergeWorkOps } = await import('../work/merge-ops.js');
  const merge = identity.kind === 'agent' ? mergeWorkOps(layout, identity.record) : personMergeWorkOps(layout);
  const all = TOOLS.filter((t) => MCP_FLEET_TOOLS.includes(t.name)).flatMap(
    (t) => t.create({ send, inbox, fleet: ops, merge, leases, tasks }) ?? [],
  );
  if (identity.kind === 'person') return all;
  const allowed = new Set(identity.record.effectivePolicy.tools);
  return all.filter((t) => allowed.has(t.name));
}
