import { existsSync } from 'node:fs';
import { contextOf, type Globals } from '../context.js';
import { writeOut } from '../output.js';
import type { CommandSpec, Parsed } from '../spec.js';

interface SendOpts {
  to?: string;
  summary?: string;
  priority: 'low' | 'normal' | 'high' | 'urgent';
  replyTo?: string;
  kind: 'message' | 'system';
  json?: boolean;
}

/**
 * `flotilla send <to> [text…]` (§2, §4). Agents call it constantly, so it runs on the fast
 * path (fast.ts, no commander) and the top of this file imports nothing heavy; the inbox
 * modules load inside `run` (never the watcher).
 */
export const spec: CommandSpec = {
  name: 'send',
  description:
    "deliver a message to an agent (id or prefix), 'human', 'parent' or 'root', or one copy to each of a group (--to children|tree|board:NAME|all); reads stdin when no text is given",
  args: [
    {
      name: '[to]',
      description:
        "recipient: agent id or unique prefix, 'human', 'parent', 'root', or a group: 'children', 'tree', 'board:NAME', 'all' (with --to, this is the text's first word)",
    },
    { name: '[text...]', description: 'message text (default: stdin)' },
  ],
  options: [
    {
      flags: '--to <target>',
      description:
        "recipient or group, as the first argument: 'children', 'tree', 'board:NAME', 'all' send one copy to each agent of the group",
    },
    { flags: '--summary <text>', description: 'one-line summary, ≤ 200 chars (default: the first line of the text)' },
    {
      flags: '--priority <level>',
      description: 'priority',
      choices: ['low', 'normal', 'high', 'urgent'],
      default: 'normal',
    },
    { flags: '--reply-to <id>', description: 'id of the message this answers' },
    { flags: '--kind <kind>', description: 'kind of message', choices: ['message', 'system'], default: 'message' },
    { flags: '--json', description: 'print the delivered message header as JSON instead of its id' },
  ],
};

export async function run(parsed: Parsed, globals: Globals): Promise<void> {
  const opts = parsed.opts as unknown as SendOpts;
  const first = parsed.args[0] as string | undefined;
  const rest = (parsed.args[1] as string[] | undefined) ?? [];
  // `--to X` frees the first argument to be text: `send --to tree 'stop and commit'`.
  const to = opts.to ?? first;
  const words = opts.to !== undefined && first !== undefined ? [first, ...rest] : rest;
  if (!to) {
    const { UsageError } = await import('../../errors.js');
    throw new UsageError(
      "no recipient — name one, e.g. flotilla send parent 'done', or a group: flotilla send --to tree 'stop and commit'",
    );
  }
  // Inside a sandbox the fleet root is read-only: the agent's harness delivers for us.
  const door = process.env.FLOTILLA_DOOR;
  const { fleetWritable } = await import('../../inbox/door.js');
  if (door && !fleetWritable(door)) return sendThroughHarness(door, to, words, opts);
  const { layout } = contextOf(globals);
  const [
    { fleetBus },
    { resolveRecipient, senderIdentity, parseBroadcastTarget },
    { inboxSettings },
    { UsageError },
    { headerOf },
  ] = await Promise.all([
    import('../../bus/settings.js'),
    import('../../inbox/address.js'),
    import('../../inbox/settings.js'),
    import('../../errors.js'),
    import('../../inbox/message.js'),
  ]);
  // Identity comes from this process's ancestry, never from the arguments or FLOTILLA_DOOR (§4).
  const from = senderIdentity(layout);
  if (from !== 'human') {
    // An agent's command sends through its harness in every mode, so what the harness holds
    // is redacted and `from` is its word (docs/security.md "The door"); the harness's own
    // door, whatever FLOTILLA_DOOR says or whether it was wiped (env -i).
    const own = layout.door(from);
    if (existsSync(own)) return sendThroughHarness(own, to, words, opts);
    // A harness without a door (a vendor CLI's shim): deliver here, with every value the
    // fleet was ever granted redacted from body and summary (docs/security-trust.md "Redaction").
    const [{ fleetRedactor }, { setFleetRedactor }] = await Promise.all([
      import('../../secrets/digests.js'),
      import('../../secrets/redact.js'),
    ]);
    setFleetRedactor(fleetRedactor(layout));
  }
  const settings = await inboxSettings(layout);
  const max = settings.max_body_bytes;
  const body = words.length > 0 ? words.join(' ') : await readStdin(max);
  if (!body.trim())
    throw new UsageError("empty message — give the text as arguments or on stdin, e.g. flotilla send human 'done'");
  // `kind: system` is Flotilla's own word, or a person's acting for it (docs/security-fleet.md "Framing").
  if (opts.kind === 'system' && from !== 'human') {
    const [{ FlotillaError }, { SYSTEM_KIND_REFUSAL }] = await Promise.all([
      import('../../errors.js'),
      import('../../inbox/address.js'),
    ]);
    throw new FlotillaError(SYSTEM_KIND_REFUSAL, { code: 'system-kind' });
  }
  const group = parseBroadcastTarget(to);
  if (group) {
    const { broadcast } = await import('../../lifecycle/broadcast.js');
    const sent = await broadcast(
      layout,
      {
        from,
        kind: opts.kind,
        priority: opts.priority,
        body,
        ...(opts.summary !== undefined ? { summary: opts.summary } : {}),
        ...(opts.replyTo !== undefined ? { in_reply_to: opts.replyTo } : {}),
      },
      group,
      { maxBodyBytes: max, allWho: settings.broadcast_all },
    );
    writeOut(opts.json ? JSON.stringify(broadcastJson(sent, headerOf), null, 2) + '\n' : sent.broadcastId + '\n');
    process.stderr.write(
      `flotilla: broadcast ${sent.broadcastId} to ${sent.target}: ${sent.copies.length} ${sent.copies.length === 1 ? 'copy' : 'copies'} (${sent.copies.map((c) => c.to).join(', ')})\n`,
    );
    return;
  }
  const bus = await fleetBus(layout);
  // An agent only another host runs is resolved through the fleet's records (§18); maildir loads nothing more.
  const recipient =
    bus.kind === 'maildir'
      ? resolveRecipient(layout, to, from)
      : await (await import('../../bus/recipient.js')).resolveAcrossHosts(layout, bus, to, from);
  const { message, queued } = await bus.mail.deliver(
    {
      from,
      to: recipient,
      kind: opts.kind,
      priority: opts.priority,
      body,
      ...(opts.summary !== undefined ? { summary: opts.summary } : {}),
      ...(opts.replyTo !== undefined ? { in_reply_to: opts.replyTo } : {}),
    },
    { maxBodyBytes: max },
  );
  // Let go of the bus connection (none on maildir) so the command exits.
  await bus.close();
  writeOut(opts.json ? JSON.stringify(headerOf(message), null, 2) + '\n' : message.id + '\n');
  if (queued)
    process.stderr.write(
      `flotilla: the bus ${bus.url} is unreachable: the message waits in this host's outbox and is sent when it returns\n`,
    );
  const note = await endedNote(layout, recipient);
  if (note) process.stderr.write(`flotilla: ${note}\n`);
}

/**
 * `send` from an agent's command: the request goes to its harness's door (inbox/door.ts),
 * which delivers it as that agent, redacted; `from` is not ours to say.
 */
async function sendThroughHarness(door: string, to: string, words: string[], opts: SendOpts): Promise<void> {
  const [{ sendThroughDoor }, { UsageError }] = await Promise.all([
    import('../../inbox/door.js'),
    import('../../errors.js'),
  ]);
  const body = words.length > 0 ? words.join(' ') : await readStdin(64 * 1_048_576); // the harness applies inbox.max_body_bytes
  if (!body.trim())
    throw new UsageError("empty message — give the text as arguments or on stdin, e.g. flotilla send human 'done'");
  const header = await sendThroughDoor(door, {
    op: 'send',
    to,
    body,
    kind: opts.kind,
    priority: opts.priority,
    ...(opts.summary !== undefined ? { summary: opts.summary } : {}),
    ...(opts.replyTo !== undefined ? { in_reply_to: opts.replyTo } : {}),
  });
  if (typeof header.broadcast_id === 'string' && Array.isArray(header.copies)) {
    writeOut(opts.json ? JSON.stringify(header, null, 2) + '\n' : `${header.broadcast_id}\n`);
    const to = (header.copies as { to: string }[]).map((c) => c.to);
    process.stderr.write(
      `flotilla: broadcast ${header.broadcast_id} to ${String(header.target)}: ${to.length} ${to.length === 1 ? 'copy' : 'copies'} (${to.join(', ')})\n`,
    );
    return;
  }
  writeOut(opts.json ? JSON.stringify(header, null, 2) + '\n' : `${String(header.id)}\n`);
}

/** What `send --json` prints for a broadcast, and what a door answers for one. */
export function broadcastJson(
  sent: import('../../lifecycle/broadcast.js').BroadcastResult,
  headerOf: (m: import('../../inbox/message.js').InboxMessage) => unknown,
): Record<string, unknown> {
  return { broadcast_id: sent.broadcastId, target: sent.target, copies: sent.copies.map(headerOf) };
}

/**
 * Mail to an agent that is no longer running is kept (a resume reads it), but nobody reads
 * it now: say so instead of a silent success.
 */
async function endedNote(layout: import('../../layout/layout.js').Layout, recipient: string): Promise<string | null> {
  if (recipient === 'human') return null;
  const [{ readRecord }, { recordLiveness }] = await Promise.all([
    import('../../fleet/registry.js'),
    import('../../fleet/liveness.js'),
  ]);
  let rec;
  try {
    rec = readRecord(layout, recipient);
  } catch {
    return null;
  }
  if (!rec) return null;
  const liveness = recordLiveness(rec);
  if (liveness === 'ended') {
    const why = rec.exitReason && rec.exitReason !== rec.status ? `: ${rec.exitReason}` : '';
    return `${rec.id} has ended (${rec.status}${why}), so no one reads this now; it waits in its inbox, and 'flotilla resume ${rec.id}' continues that agent with it`;
  }
  if (liveness === 'dead')
    return `${rec.id} is not running (its process is gone), so no one reads this now; it waits in its inbox — see 'flotilla status'`;
  return null;
}

/** Reads stdin, stopping just past the limit so a huge pipe is refused without being held in memory. */
async function readStdin(max: number): Promise<string> {
  if (process.stdin.isTTY) {
    const { UsageError } = await import('../../errors.js');
    throw new UsageError(
      'no message text — give it as arguments or pipe it on stdin, e.g. echo done | flotilla send human',
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    chunks.push(buf);
    size += buf.length;
    if (size > max) break;
  }
  return Buffer.concat(chunks).toString('utf8');
}
