import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { CLI_ENTRY } from '../../src/layout/package.js';
import { userCacheDir } from '../../src/layout/layout.js';
import { agentProcesses } from './helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

/**
 * The first task reaches the model as its first request, once, with the fleet tools offered in
 * that request (§13): Codex and Gemini CLI get it on their command line and connect their MCP
 * servers first; Claude 2.1, which would send a command-line task before its MCP servers are
 * connected, gets it once `flotilla mcp` has listed the fleet tools and Claude has taken them (and
 * the server's instructions) into its state. Asserted on what the fake vendor API received.
 */
const fleets = vendorFleets();

const TASK = 'report to your parent, first-task-7319';

/** How many times the task's words are in the user turns of one request. */
function timesAsked(prompt: LanguageModelV3Prompt | undefined): number {
  const texts = (prompt ?? [])
    .filter((m) => m.role === 'user')
    .flatMap((m) => m.content)
    .map((c) => (c.type === 'text' ? c.text : ''));
  return texts.join('\n').split('first-task-7319').length - 1;
}

describe('the first task and the first model request', { timeout: 600_000 }, () => {
  it.each(RUNTIMES)('%s: the first request asks the task once, with the fleet tools', async (name) => {
    const t = TARGETS[name]();
    const f = await fleets.open({
      runtime: t.runtime,
      wire: t.wire,
      script: 'report.yaml',
      bin: t.bin,
      definitions: { a: DONT_ASK },
      env: t.env,
    });
    const id = await f.spawnChild('a', `${name}-first`, TASK, t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length > 0, 240_000, 'completion');
    expect(f.vendor.tools[0]).toContain(`${t.runtime.mcpToolPrefix}send_message`);
    // Who the agent is: the fleet server's instructions say it, and Claude's SessionStart context too (Claude may
    // build its first request before the instructions reach its state).
    expect(JSON.stringify(f.vendor.bodies[0])).toContain(`You are fleet agent ${id} (depth 1)`);
    if (t.runtime.sessionContext)
      expect(JSON.stringify(f.vendor.bodies[0])).toContain(
        `SessionStart hook additional context: You are fleet agent ${id} (depth 1)`,
      );
    expect(timesAsked(f.vendor.prompts[0])).toBe(1);
    // The whole conversation, as the last request carries it: the task was never given a second time.
    expect(timesAsked(f.vendor.prompts.at(-1))).toBe(1);
    expect(f.mail('lead-parent').filter((m) => m.kind === 'message')).toEqual([
      expect.objectContaining({ from: id, summary: 'progress' }),
    ]);
    expect(completionsFrom(f, 'lead-parent', id)).toEqual([expect.objectContaining({ status: 'completed' })]);
    expect(f.record(id)).toMatchObject({ task: 1 });
    // Idle, the agent keeps no Flotilla process beside its shim: the shim answers its hooks and serves its MCP server,
    // which a sandboxed CLI reaches through the door in perl (tools/door-pipe), not in a Node of its own.
    const ours = agentProcesses(f.layout, id).filter((c) => c[1] === CLI_ENTRY);
    expect(ours.map((c) => c.slice(2).filter((a) => a && a !== '--root' && a !== f.layout.root))).toEqual([]);
    // The zod its fleet tools are checked with came from its own chunk (cli/chunk.ts), whose code cache the shim
    // writes once the CLI has listed the tools: the next agent's shim reads it.
    const cacheDir = join(userCacheDir(f.env), 'v8');
    await eventually(
      () => existsSync(cacheDir) && readdirSync(cacheDir).some((n) => n.startsWith('zod-') && n.endsWith('.cache')),
      30_000,
      "the zod chunk's code cache",
    );
  });
});
