import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { createBuiltinTools } from '../tools/builtin.js';
import { bubblewrapArgv, findBubblewrap } from '../tools/sandbox.js';
import { trackToolGroups } from '../lifecycle/tool-groups.js';
import { createCheckInboxTool } from '../tools/check-inbox.js';
import { runTool } from '../tools/run-tool.js';
import { createSendMessageTool } from '../tools/send-message.js';
import type { Tool } from '../tools/types.js';
import { createFleetAgentTools } from '../tools/fleet-agents.js';

/**
 * The tools one agent is shown (§6): the built-ins and the fleet tools, filtered to its
 * effective policy (§7), each run through the central wrapper (validation errors written
 * for the model, head+tail truncation, marker scrubbing).
 */
export async function buildTools(opts: {
  layout: Layout;
  config: Config;
  record: AgentRecord;
  env: NodeJS.ProcessEnv;
  memoryDir: string | undefined;
  inbox: { takeForTool(peek: boolean): Promise<string> };
  log: Log;
}): Promise<Tool[]> {
  const { layout, config, record: rec } = opts;
  // Asked for and missing is a refusal to start, never a silently unsandboxed agent.
  const bwrap = config.security.sandbox === 'bubblewrap' ? findBubblewrap(opts.env) : undefined;
  const sandbox = { writable: [rec.cwd, ...(opts.memoryDir ? [opts.memoryDir] : [])], readOnly: [layout.root], network: config.security.sandbox_network, ...(bwrap ? { bwrap } : {}) };
  const builtins = createBuiltinTools({
    cwd: rec.cwd,
    protectedRoots: [layout.root],
    writableWithin: opts.memoryDir ? [opts.memoryDir] : [],
    shellTimeoutSecs: config.tools.shell_timeout_secs,
    env: opts.env,
    maxOutputBytes: config.tools.max_output_bytes,
    ...(bwrap ? { wrap: (argv: string[]) => bubblewrapArgv(sandbox, argv) } : {}),
    track: trackToolGroups(layout, rec.id),
  });
  const { deliver } = await import('../inbox/deliver.js');
  const { resolveRecipient } = await import('../inbox/address.js');
  const messaging: Tool[] = [
    createSendMessageTool({
      async send(m) {
        const to = resolveRecipient(layout, m.to, rec.id);
        const d = await deliver(layout, {
          from: rec.id, to, kind: 'message', body: m.body,
          ...(m.summary ? { summary: m.summary } : {}), ...(m.priority ? { priority: m.priority } : {}), ...(m.inReplyTo ? { in_reply_to: m.inReplyTo } : {}),
        }, { maxBodyBytes: config.inbox.max_body_bytes });
        return { id: d.message.id, to };
      },
    }),
    createCheckInboxTool({ read: (peek) => opts.inbox.takeForTool(peek) }),
  ];
  const all = [...builtins, ...messaging, ...createFleetAgentTools(await fleetOps(layout, config, rec))];
  const allowed = new Set(rec.effectivePolicy.tools);
  return all
    .filter((t) => allowed.has(t.name))
    .map((t) => ({ ...t, execute: (input: unknown, ctx) => runTool(t, input, ctx, { maxOutputBytes: config.tools.max_output_bytes }) }) as Tool);
}

async function fleetOps(layout: Layout, config: Config, rec: AgentRecord) {
  const { fleetOpsFor } = await import('../spawn/ops.js');
  return fleetOpsFor(layout, config, rec);
}
