import type { ModelMessage } from 'ai';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { canonicalOfVendorTool } from '../policy/tool-table.js';
import { TRANSCRIPT_VERSION, type MessageEntry, type TranscriptHeader } from '../transcript/entries.js';
import { readVendorSession, type VendorSession } from './vendor-session.js';

/**
 * The session as `flotilla transcript` prints it: a header of ours (from the record) and each
 * turn as a message entry, numbered in order — the shapes our own transcripts use, so one
 * formatter and `--json` serve both.
 */
export function sessionAsTranscript(
  rec: AgentRecord,
  session: VendorSession,
): { header: TranscriptHeader; entries: MessageEntry[] } {
  const header: TranscriptHeader = {
    type: 'header',
    version: TRANSCRIPT_VERSION,
    agent_id: rec.id,
    def_name: rec.name,
    parent_id: rec.parentId,
    model: rec.model,
    cwd: rec.cwd,
    resumed_from: rec.resumedFrom,
    created_at: rec.startedAt ?? rec.createdAt,
  };
  const entries = session.turns.map((t, i): MessageEntry => ({
    seq: i + 1,
    ts: t.ts ?? header.created_at,
    type: 'message',
    message: ourToolNames(session, t.message),
  }));
  return { header, entries };
}

/**
 * Tool calls under Flotilla's names (the tool table, policy/tool-table.ts), so a vendor
 * agent's transcript reads like ours: Codex's `exec_command {cmd}` and Gemini's
 * `run_shell_command` print as `$ <command>`; the fleet tools lose the CLI's MCP prefix.
 */
function ourToolNames(session: VendorSession, message: ModelMessage): ModelMessage {
  if ((message.role !== 'assistant' && message.role !== 'tool') || typeof message.content === 'string') return message;
  const { runtime } = session;
  const rename = (name: string): string =>
    name.startsWith(runtime.mcpToolPrefix)
      ? name.slice(runtime.mcpToolPrefix.length)
      : (canonicalOfVendorTool(runtime.name, name) ?? name);
  const content = message.content.map((part) => {
    if (part.type === 'tool-result') return { ...part, toolName: rename(part.toolName) };
    if (part.type !== 'tool-call') return part;
    const toolName = rename(part.toolName);
    const input = part.input as Record<string, unknown> | null;
    // Codex gives its shell the command as `cmd` (a string, or argv).
    const cmd = input && typeof input === 'object' && input.command === undefined ? input.cmd : undefined;
    return {
      ...part,
      toolName,
      input: cmd === undefined ? part.input : { ...input, command: Array.isArray(cmd) ? cmd.join(' ') : cmd },
    };
  });
  return { ...message, content } as ModelMessage;
}

/**
 * Prints a vendor agent's transcript; with `follow`, the turns the CLI adds are printed as it
 * writes them (the file is read again each second) until the agent has ended.
 */
export async function printVendorTranscript(
  layout: Layout,
  rec: AgentRecord,
  print: (r: TranscriptHeader | MessageEntry) => void,
  opts: { follow: boolean; json: boolean },
): Promise<void> {
  const first = await readVendorSession(layout, rec);
  const { header, entries } = sessionAsTranscript(rec, first);
  print(header);
  if (!opts.json) process.stdout.write(`  (from ${first.runtime.title}'s session file ${first.file})\n`);
  entries.forEach(print);
  if (!opts.follow) return;
  const [{ readRecord }, { recordLiveness }, { sleep }] = await Promise.all([
    import('../fleet/registry.js'),
    import('../fleet/liveness.js'),
    import('../sleep.js'),
  ]);
  const ended = (): boolean => {
    const now = readRecord(layout, rec.id);
    return !now || ['ended', 'dead'].includes(recordLiveness(now));
  };
  let shown = entries.length;
  let stop = false;
  process.once('SIGINT', () => {
    stop = true;
  });
  while (!stop) {
    const done = ended();
    const next = sessionAsTranscript(rec, await readVendorSession(layout, rec)).entries;
    next.slice(shown).forEach(print);
    shown = Math.max(shown, next.length);
    if (done) return;
    await sleep(1000);
  }
}
