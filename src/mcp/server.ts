import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { audit } from '../audit/audit.js';
import type { Config } from '../config/schema.js';
import type { Layout } from '../layout/layout.js';
import { canonicalToolName, permissionDecision } from '../policy/index.js';
import { runTool } from '../tools/run-tool.js';
import type { Tool } from '../tools/types.js';
import { actorId, fleetInstructions, type McpIdentity } from './identity.js';
import { mcpTools } from './tools.js';
import { traceMark } from '../trace.js';
import { INVALID_PARAMS, RpcError, serveJsonRpc, type RpcPeer } from './json-rpc.js';

/**
 * `flotilla mcp` (§13): the fleet tools over MCP stdio. Each call goes through the same
 * wrapper as in the harness (input validation written for the model, truncation, marker
 * scrubbing), the same refusals (tool policy, plan mode, spawn limits), and the same audit
 * lines, marked `via: mcp`.
 */
export async function serveMcp(
  layout: Layout,
  config: Config,
  identity: McpIdentity,
  io: {
    stdin?: NodeJS.ReadableStream;
    stdout?: NodeJS.WritableStream;
    version: string;
    /** Called once, after the first tools/list is answered: a client's start is done (start-done.ts). */
    listed?: () => void;
    /** The environment an agent's spawns and merges take (its commands' own); default process.env. */
    env?: NodeJS.ProcessEnv;
  },
): Promise<{ closed: Promise<void>; close: () => Promise<void> }> {
  const tools = mcpTools(layout, config, identity, io.env);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const me = actorId(identity);
  const cwd = identity.kind === 'agent' ? identity.record.cwd : process.cwd();

  const instructions = fleetInstructions(identity);
  // Once, after the first tools/list (answered within this turn of the event loop): the CLI's fleet tools are listed
  // (mcp-ready), and a client's start is done (start-done.ts).
  // The connection (`peer`, made below) sends the ping after the first tools/list.
  const ready = toolsListed(layout, identity, () => peer);
  let listed: (() => void) | undefined =
    ready || io.listed
      ? () => {
          ready?.();
          io.listed?.();
        }
      : undefined;
  const callTool = async (params: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> => {
    const name = params.name;
    if (typeof name !== 'string') throw new RpcError(INVALID_PARAMS, 'tools/call needs params.name, a tool name');
    const tool = byName.get(name);
    const refusedWhy = refusal(identity, name, tool);
    if (refusedWhy) {
      audit(layout, {
        event: 'policy_denied',
        agent: me,
        tool: name,
        rule: refusedWhy.rule,
        reason: refusedWhy.reason,
        via: 'mcp',
      });
      return { content: [{ type: 'text', text: refusedWhy.reason }], isError: true };
    }
    const input = params.arguments ?? {};
    audit(layout, { event: 'tool_call', agent: me, tool: name, decision: 'allow', via: 'mcp' });
    const started = performance.now();
    const result = await runTool(
      tool!,
      input,
      { signal, cwd, agentId: me },
      { maxOutputBytes: config.tools.max_output_bytes },
    );
    audit(layout, {
      event: 'tool_result',
      agent: me,
      tool: name,
      is_error: !!result.isError,
      duration_ms: Math.round(performance.now() - started),
      via: 'mcp',
      ...(result.meta ?? {}),
    });
    return { content: [{ type: 'text', text: result.output }], ...(result.isError ? { isError: true } : {}) };
  };
  const peer = serveJsonRpc(
    { stdin: io.stdin ?? process.stdin, stdout: io.stdout ?? process.stdout },
    {
      initialize: (params) => {
        traceMark('mcp: initialize asked');
        return {
          protocolVersion: protocolVersion(params.protocolVersion),
          capabilities: { tools: {} },
          serverInfo: { name: 'flotilla', version: io.version },
          instructions,
        };
      },
      ping: () => ({}),
      'tools/list': () => {
        if (listed) setImmediate(listed);
        listed = undefined;
        return { tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: jsonSchema(t) })) };
      },
      'tools/call': callTool,
    },
    { 'notifications/initialized': () => traceMark('mcp: client initialized') },
    maxMessage(config),
  );
  return { closed: peer.closed, close: () => peer.close() };
}

/** The MCP revisions this server speaks, newest first: the client's own when it is one of them, else the newest. */
const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];

function protocolVersion(asked: unknown): string {
  return PROTOCOL_VERSIONS.find((v) => v === asked) ?? PROTOCOL_VERSIONS[0]!;
}

/** A tool call's answer (MCP's CallToolResult, as this server makes it). */
interface CallToolResult {
  content: { type: 'text'; text: string }[];
  isError?: boolean;
}

/**
 * The longest line the server reads: room for the largest message body the inbox takes, escaped as JSON (a control
 * character is six), and never less than 16 Mi characters.
 */
function maxMessage(config: Config): number {
  return Math.max(16 * 2 ** 20, 6 * config.inbox.max_body_bytes + 65_536);
}

/** How long the CLI may take to answer the ping after its first tools/list before `mcp-ready` is written anyway. */
const PING_MS = 10_000;

/**
 * A vendor CLI's `mcp-ready`, written once this server has answered the CLI's first tools/list and
 * then the CLI has answered a ping: the CLI has read the tools, not just been sent them (a busy CLI
 * reads its pipe late), and has them from then on. Claude's session-start hook waits for it before
 * the CLI takes its task (harness/door-send.ts, cli-host/hook.ts); the shim types a resumed Claude's
 * task and mail only after it (cli-host/cli-tend.ts, idle.ts).
 */
function toolsListed(layout: Layout, identity: McpIdentity, peer: () => RpcPeer): (() => void) | undefined {
  if (identity.kind !== 'agent' || identity.record.runtime === 'flotilla') return undefined;
  const ready = join(layout.runtimeDir(identity.record.id), 'mcp-ready');
  return () => {
    traceMark('mcp: tools listed');
    // An error answer, or none, still ends the wait: every waiter has a deadline of its own too.
    void peer()
      .request('ping', undefined, PING_MS)
      .catch(() => undefined)
      .then(() => {
        traceMark('mcp: ping answered');
        try {
          writeFileSync(ready, String(process.pid));
        } catch {
          /* a waiter gives up after its own deadline */
        }
      });
  };
}

/** Why a call is refused before it runs (same rules as the harness's gate), or null. */
function refusal(identity: McpIdentity, name: string, tool: Tool | undefined): { rule: string; reason: string } | null {
  if (identity.kind === 'person') {
    return tool
      ? null
      : {
          rule: 'unknown-tool',
          reason: `'${name}' is not a Flotilla fleet tool — list the tools to see what is offered`,
        };
  }
  const rec = identity.record;
  if (!tool) {
    const known = canonicalToolName(name);
    return {
      rule: 'unknown-tool',
      reason: `'${name}' is not among this agent's tools (${rec.id} may use: ${rec.effectivePolicy.tools.filter((t) => t !== known).join(', ') || 'none'})`,
    };
  }
  const mode = rec.permissionMode;
  // Nobody answers questions through MCP: an ask is a denial, as for a headless agent.
  const perm = permissionDecision(mode, tool.klass, { canAsk: false });
  if (perm.decision === 'deny') {
    return {
      rule: perm.rule,
      reason:
        perm.rule === 'plan'
          ? 'plan mode: tools are shown but nothing is executed — answer in text'
          : `permission mode '${mode}' needs a person's approval for ${name} (rule: ${perm.rule})`,
    };
  }
  return null;
}

function jsonSchema(tool: Tool): { type: 'object'; [k: string]: unknown } {
  const schema = z.toJSONSchema(tool.inputSchema as z.ZodType, { io: 'input' }) as Record<string, unknown>;
  delete schema.$schema;
  return { ...schema, type: 'object' };
}
