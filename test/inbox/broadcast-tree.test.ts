import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeBuses } from '../../src/bus/open.js';
import { BUSES, natsServer, type BusKind, type NatsServer } from '../helpers/nats.js';
import { scriptCalls, userTexts, type LoggedCall } from '../helpers/scripts.js';
import { eventually } from '../helpers/tmux.js';
import { isAlive, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * A broadcast to a tree of ten real harnesses on the scripted model, in a private tmux
 * server (docs/design.md §4, "Broadcast"): the lead's `send_message {to: tree}` gives each
 * of the nine others one copy, all with one broadcast id, and each model sees it exactly once
 * — also the one killed (SIGKILL) before it read its copy and the one killed after, once
 * `flotilla resume` has brought them back. On every bus (§18): on nats:// (a real nats-server
 * started here, named in the fleet's config) each copy travels on the fleet's stream and each
 * member's harness spools it.
 */

let f: SpawnFleet | undefined;
afterEach(async () => {
  if (f) writeFileSync(join(f.project, 'release'), '');
  await closeBuses();
  await f?.close();
  f = undefined;
});

const WORD = 'tree-broadcast-6621';
const MEMBERS = ['m-1', 'm-2', 'm-3', 'm-4', 'm-5', 'm-6', 'm-7', 'm-8', 'h-0'];

/**
 * How many framed messages holding the broadcast the conversation of an agent's last model call has (by its harness
 * pid).
 */
function seenInLastCall(log: string, pid: number | null): number {
  const calls = scriptCalls(log).filter((c: LoggedCall) => c.pid === pid);
  const last = calls.at(-1);
  if (!last) return 0;
  const framed =
    userTexts(last)
      .join('\n')
      .match(/<inbox-message[^>]*>[\s\S]*?<\/inbox-message>/g) ?? [];
  return framed.filter((m) => m.includes(WORD)).length;
}

describe.each(BUSES)('broadcast to a tree (§4) on the $bus bus', ({ bus: kind }: { bus: BusKind }) => {
  let server: NatsServer | undefined;
  beforeAll(async () => {
    if (kind === 'nats') server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server?.kill();
  });

  it(
    'a tree of ten: one copy each with one broadcast id, each seen exactly once, across a receiver SIGKILL and resume',
    { timeout: 600_000 },
    async () => {
      f = spawnFleet({
        definitions: { lead: 'bcast-lead.yaml', member: 'bcast-member.yaml', holder: 'bcast-holder.yaml' },
        config: `limits:\n  max_children: 12\n  max_running: 16\n${server ? `fleet:\n  bus: ${server.url}\n` : ''}`,
      });
      const log = join(f.project, 'calls.jsonl');
      const env = { FLOTILLA_SCRIPT_LOG: log };
      const lead = await f.spawnAgent(['--agent', 'lead', '--id', 'lead', 'build the team'], env);
      expect(lead.exitCode, lead.stderr).toBe(0);
      // Every member has answered its first task (the holder is in its shell call), so all are idle or busy, none
      // starting.
      await eventually(
        () => MEMBERS.every((id) => existsSync(f!.layout.registryFile(id))),
        300_000,
        'nine members spawned',
      );
      await eventually(
        () => MEMBERS.filter((id) => id !== 'h-0').every((id) => f!.record(id).lastTask?.status === 'completed'),
        300_000,
        'members standing by',
      );
      await eventually(() => existsSync(join(f!.project, 'holding')), 120_000, 'the holder in its shell call');
      expect(f.record('h-0').rootId).toBe('lead');

      writeFileSync(join(f.project, 'go'), '');
      // The broadcast's copies: messages holding the word (a member's completion to the lead quotes it once that member
      // has answered).
      const copiesOf = (id: string) => f!.mail(id).filter((m) => m.kind === 'message' && (m.body ?? '').includes(WORD));
      await eventually(() => MEMBERS.every((id) => copiesOf(id).length === 1), 120_000, 'a copy in each inbox');
      const ids = new Set(MEMBERS.map((id) => copiesOf(id)[0]!.broadcast_id));
      expect(ids.size).toBe(1);
      const broadcastId = [...ids][0]!;
      expect(broadcastId).toMatch(/^[0-9a-z]{19}$/);
      for (const id of MEMBERS) expect(copiesOf(id)[0]).toMatchObject({ from: 'lead', to: id, kind: 'message' });
      // On nats:// each copy came off the fleet's stream into its member's spool (the bus's file names, §18).
      if (kind === 'nats') for (const id of MEMBERS) expect(copiesOf(id)[0]!.file).toMatch(/\.bus\.md/);
      expect(new Set(MEMBERS.map((id) => copiesOf(id)[0]!.id)).size).toBe(MEMBERS.length);
      expect(copiesOf('lead')).toEqual([]);

      // The eight idle members read it at once, once each.
      const idle = MEMBERS.filter((id) => id !== 'h-0');
      await eventually(
        () => idle.every((id) => seenInLastCall(log, f!.record(id).pid) === 1),
        120_000,
        'every idle member saw the broadcast',
      );

      // The holder is killed before it read its copy; m-1 after it did.
      const holderPid = f.record('h-0').pid!;
      expect(seenInLastCall(log, holderPid)).toBe(0);
      const m1Pid = f.record('m-1').pid!;
      process.kill(holderPid, 'SIGKILL');
      process.kill(m1Pid, 'SIGKILL');
      await eventually(() => !isAlive(holderPid) && !isAlive(m1Pid), 60_000, 'both harnesses gone');

      const holder = await f.flotilla(['resume', 'h-0'], env);
      expect(holder.exitCode, holder.stderr).toBe(0);
      const holderNext = holder.stdout.trim();
      const m1 = await f.flotilla(['resume', 'm-1', 'anything new?'], env);
      expect(m1.exitCode, m1.stderr).toBe(0);
      const m1Next = m1.stdout.trim();

      // The holder's successor adopts its unread copy and shows it once; m-1's successor has it
      // once, from the history it continues, never again as mail.
      await eventually(
        () => seenInLastCall(log, f!.record(holderNext).pid) === 1,
        120_000,
        "the holder's successor saw its copy",
      );
      await eventually(() => f!.record(m1Next).lastTask?.status === 'completed', 120_000, "m-1's successor answered");
      expect(seenInLastCall(log, f.record(m1Next).pid)).toBe(1);
      const m1Calls = scriptCalls(log).filter((c) => c.pid === f!.record(m1Next).pid);
      for (const c of m1Calls)
        expect(userTexts(c).filter((t) => t.includes('<inbox-message') && t.includes(WORD)).length).toBeLessThanOrEqual(
          1,
        );
      // Still one copy per agent on disk (the holder's moved to its successor, read): nothing was
      // sent again, nothing re-delivered.
      for (const id of MEMBERS.filter((m) => m !== 'h-0')) expect(copiesOf(id)).toHaveLength(1);
      expect(copiesOf(m1Next)).toEqual([]);
      expect([...copiesOf('h-0'), ...copiesOf(holderNext)]).toHaveLength(1);
      await eventually(
        () => copiesOf(holderNext).every((m) => m.file!.startsWith('cur/')),
        60_000,
        "the holder's copy claimed by its successor",
      );
    },
  );
});
