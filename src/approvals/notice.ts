import type { AgentRecord } from '../fleet/record.js';
import { list } from '../inbox/read.js';
import type { Layout } from '../layout/layout.js';

/**
 * The line `spawn-agent --wait` and `flotilla wait` print on stderr when an agent they wait
 * for stops to ask a person: without it the wait just looks hung. Names the
 * request and every way to answer it.
 */
export async function approvalNotice(layout: Layout, rec: AgentRecord): Promise<string> {
  let request: { id: string; summary: string } | undefined;
  // The record may say so a moment before the request is delivered.
  for (let tries = 0; !request && tries < 10; tries++) {
    if (tries) await new Promise((r) => setTimeout(r, 100));
    try {
      for (const item of await list(layout, 'human')) {
        const m = item.message;
        if (m.kind === 'approval_request' && m.from === rec.id) request = { id: m.request_id, summary: m.summary };
      }
    } catch {
      // The record alone still says it waits.
    }
  }
  const how = request
    ? `answer with 'flotilla approve ${request.id}' or 'flotilla deny ${request.id}'`
    : "answer with 'flotilla approve <request>' (see 'flotilla inbox')";
  return `flotilla: ${rec.id} is waiting for your approval${request ? `: ${request.summary}` : ''} — ${how}, or in its pane ('flotilla attach ${rec.id}')`;
}
