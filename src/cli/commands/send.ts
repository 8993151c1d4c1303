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
 * path (fast.ts, no commander) and the top of this file imports nothing heavy; sending itself
 * is lifecycle/send.ts's, loaded inside `run`.
 */
export const spec: CommandSpec = {
  name: 'send',
  fast: true,
  // Met before the text is read (lifecycle/send.ts sendPlan): a group, the nats bus, a
  // config file the config cache has not seen. An agent's send without a door stays here: its
  // redaction (secrets/digests.ts) is ~4 KB, the full CLI ~75 ms more of the send.
  fastLeavesOut: [
    'lifecycle/broadcast.ts',
    'bus/recipient.ts',
    'bus/nats/bus.ts',
    'bus/nats/caps.ts',
    'config/load.ts',
    // Never met by a send: the maildir bus's other parts.
    'inbox/claim.ts',
    'fleet/slots.ts',
    'fleet/caps.ts',
  ],
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
  const { sendFromCommand } = await import('../../lifecycle/send.js');
  const { reply, notes } = await sendFromCommand(() => contextOf(globals).layout, {
    to,
    text: words.length > 0 ? words.join(' ') : undefined,
    readBody: readStdin,
    kind: opts.kind,
    priority: opts.priority,
    summary: opts.summary,
    inReplyTo: opts.replyTo,
  });
  if (typeof reply.broadcast_id === 'string' && Array.isArray(reply.copies)) {
    writeOut(opts.json ? JSON.stringify(reply, null, 2) + '\n' : `${reply.broadcast_id}\n`);
    const to = (reply.copies as { to: string }[]).map((c) => c.to);
    process.stderr.write(
      `flotilla: broadcast ${reply.broadcast_id} to ${String(reply.target)}: ${to.length} ${to.length === 1 ? 'copy' : 'copies'} (${to.join(', ')})\n`,
    );
  } else writeOut(opts.json ? JSON.stringify(reply, null, 2) + '\n' : `${String(reply.id)}\n`);
  for (const note of notes) process.stderr.write(`flotilla: ${note}\n`);
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
