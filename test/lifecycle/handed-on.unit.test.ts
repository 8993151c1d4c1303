import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nullLog } from '../../src/audit/logger.js';
import { defaultConfig } from '../../src/config/schema.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import { createRecord } from '../../src/fleet/registry.js';
import { drainInbox, unreadCount } from '../../src/harness/cli-host/mail.js';
import { openInboxPort } from '../../src/harness/inbox-port.js';
import { deliver } from '../../src/inbox/deliver.js';
import { list } from '../../src/inbox/read.js';
import { completionDraft, sendCompletionOnce } from '../../src/lifecycle/completion.js';
import { markHandedOn } from '../../src/lifecycle/handed-on.js';
import { eventually } from '../helpers/tmux.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

/**
 * A result handed on to the agent whose command printed it is read in that agent's inbox
 * (docs/decisions.md "Handed on is read"), whichever comes first: the mark or the completion.
 */
let f: TempFleet;
let kid: AgentRecord;
beforeEach(() => {
  f = tempFleet('flotilla-handed-on-');
  createRecord(f.layout, recordInput('par-a', { status: 'working' }));
  const finishedAt = new Date().toISOString();
  kid = createRecord(
    f.layout,
    recordInput('kid-a', {
      parentId: 'par-a',
      rootId: 'par-a',
      depth: 1,
      status: 'completed',
      finishedAt,
      lastTask: { task: 1, status: 'completed', exitReason: null, finishedAt, outputPath: null },
    }),
  );
});
afterEach(() => f.cleanup());

/** Where each completion from kid-a in `owner`'s inbox is: `new` (unread) or `cur` (read). */
const where = async (owner: string) =>
  (await list(f.layout, owner, { includeRead: true }))
    .filter((i) => i.message.kind === 'completion' && i.message.from === 'kid-a')
    .map((i) => (i.read ? 'cur' : 'new'));

/** The completion put into the parent's new/ as the bus's feed spools it: no claim follows its delivery. */
const spool = async () => {
  const { draft, options } = completionDraft(kid, kid.lastTask!, 'par-a', { text: 'the answer' });
  await deliver(f.layout, draft, options);
};

describe('a completion handed on to its parent agent', () => {
  it('marked before it is delivered: claimed as it is delivered', async () => {
    await markHandedOn(f.layout, 'par-a', [{ id: 'kid-a', task: 1 }]);
    expect(await sendCompletionOnce(f.layout, kid, kid.lastTask!)).toBe(true);
    expect(await where('par-a')).toEqual(['cur']);
  });

  it('delivered before it is marked: claimed by the mark', async () => {
    expect(await sendCompletionOnce(f.layout, kid, kid.lastTask!)).toBe(true);
    expect(await where('par-a')).toEqual(['new']);
    await markHandedOn(f.layout, 'par-a', [{ id: 'kid-a', task: 1 }]);
    expect(await where('par-a')).toEqual(['cur']);
  });

  it("handed on to a person: the parent's copy stays unread (it never saw the answer)", async () => {
    await markHandedOn(f.layout, 'human', [{ id: 'kid-a', task: 1 }]);
    await sendCompletionOnce(f.layout, kid, kid.lastTask!);
    expect(await where('par-a')).toEqual(['new']);
  });

  it("spooled after the mark: the flotilla runtime's inbox never shows it and claims it", async () => {
    const port = await openInboxPort(f.layout, 'par-a', defaultConfig(), nullLog);
    try {
      await markHandedOn(f.layout, 'par-a', [{ id: 'kid-a', task: 1 }]);
      await spool();
      expect(await port.take()).toBeUndefined();
      expect(await port.hasUnread()).toBe(false);
      expect(await port.takeForTool(true)).toBe('No unread messages.');
      await eventually(async () => (await where('par-a')).join() === 'cur', 10_000, 'the claim');
    } finally {
      await port.close();
    }
  });

  it("held by the flotilla runtime's inbox before the mark: not shown after it", async () => {
    const port = await openInboxPort(f.layout, 'par-a', defaultConfig(), nullLog);
    try {
      await spool();
      expect(await port.hasUnread()).toBe(true);
      await markHandedOn(f.layout, 'par-a', [{ id: 'kid-a', task: 1 }]);
      expect(await port.take()).toBeUndefined();
      expect(await where('par-a')).toEqual(['cur']);
    } finally {
      await port.close();
    }
  });

  it("spooled after the mark: a vendor CLI's shim neither counts it nor types it in, and claims it", async () => {
    await markHandedOn(f.layout, 'par-a', [{ id: 'kid-a', task: 1 }]);
    await spool();
    expect(await unreadCount(f.layout, 'par-a', 64_000)).toBe(0);
    expect(await where('par-a')).toEqual(['cur']);
    await spool(); // the bus hands it over again under its fixed name: a second copy, dropped
    expect(await drainInbox(f.layout, 'par-a', 64_000)).toEqual({ text: '', count: 0 });
    expect(await where('par-a')).toEqual(['cur']);
  });

  it('mail that is not handed on still wakes the shim and is typed in', async () => {
    await spool();
    expect(await unreadCount(f.layout, 'par-a', 64_000)).toBe(1);
    const drained = await drainInbox(f.layout, 'par-a', 64_000);
    expect(drained.count).toBe(1);
    expect(drained.text).toContain('the answer');
  });
});
