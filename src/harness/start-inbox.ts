import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import type { TranscriptWriter } from '../transcript/writer.js';
import { feedFromBus } from './bus-feed.js';
import { openInboxPort, type HarnessInboxPort } from './inbox-port.js';
import type { AgentSession } from './session.js';
import { predecessors } from './start-steps.js';

/**
 * The agent's inbox as its harness starts (§4, §18): its spool swept, mail a tool reads
 * recorded in the transcript, the spool fed from the bus and the host's presence kept while it
 * lives. Closing the inbox closes all of them.
 */
export async function openAgentInbox(opts: {
  layout: Layout;
  config: Config;
  rec: AgentRecord;
  log: Log;
  transcript: TranscriptWriter | null;
  /** Mail the resumed transcript already surfaced (harness/start-steps.ts openHistory). */
  recorded: { files: Set<string>; ids: Set<string> };
  /** The session once it is made: the one a `lost` mark ends. */
  session: () => AgentSession | undefined;
}): Promise<HarnessInboxPort> {
  const { layout, config, rec, log, transcript } = opts;
  const { sweepStaleTemp } = await import('../inbox/maildir.js');
  sweepStaleTemp(layout, rec.id);
  const inbox = await openInboxPort(
    layout,
    rec.id,
    config,
    log,
    opts.recorded,
    predecessors(layout, rec),
    ({ ids, files }) =>
      transcript
        ? transcript.append({
            type: 'surfaced',
            source: 'inbox',
            via: 'tool',
            ids,
            files,
            text: `read through a tool: ${ids.join(', ')}`,
          })
        : true,
  );
  // On a bus, this harness keeps its spool fed and its presence kept until it closes (§18, §17.8).
  const feed = await feedFromBus(layout, config, rec, log, (reason) => {
    const session = opts.session();
    if (!session) return false;
    void session.shutdown('cancelled', reason);
    return true;
  });
  const closeInbox = inbox.close.bind(inbox);
  inbox.close = async () => {
    feed.stopPresence();
    await closeInbox();
    await feed.close();
    // The board's and leases' connections (bus/shared.ts), opened by a task tool or an edit's lease.
    await (await import('../bus/shared.js')).closeShared();
  };
  return inbox;
}
