import { afterEach, describe, expect, it } from 'vitest';
import { createRecord } from '../../src/fleet/registry.js';
import { deliver } from '../../src/inbox/deliver.js';
import { FleetFeed } from '../../src/watch/feed.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

/**
 * The dashboard loads the message parser only when the human inbox holds something that may
 * be an approval request; either way, a pending request is on the first frame.
 */

let fleet: TempFleet | undefined;
afterEach(() => fleet?.cleanup());

async function fleetWith(request: boolean): Promise<FleetFeed> {
  fleet = tempFleet();
  const layout = fleet.layout;
  createRecord(layout, recordInput('asker-aaa111', { status: request ? 'waiting_approval' : 'working' }));
  await deliver(layout, { from: 'asker-aaa111', to: 'human', kind: 'message', body: 'a note' });
  if (request)
    await deliver(layout, {
      from: 'asker-aaa111',
      to: 'human',
      kind: 'approval_request',
      request_id: 'req1aaaaaaaa',
      tool: 'shell',
      priority: 'high',
      summary: 'asker-aaa111 asks to run $ npm publish',
      body: 'x',
    });
  return new FleetFeed(layout);
}

describe('FleetFeed and the message parser', () => {
  it('a pending request at start is on the first snapshot once the feed is ready', async () => {
    const feed = await fleetWith(true);
    await feed.ready();
    expect(feed.current.approvals.map((a) => a.requestId)).toEqual(['req1aaaaaaaa']);
    expect(feed.current.rows[0]?.approval?.requestId).toBe('req1aaaaaaaa');
    feed.close();
  });

  it('a request that arrives later is shown after the parser loads', async () => {
    const feed = await fleetWith(false);
    await feed.ready();
    expect(feed.current.approvals).toEqual([]);
    const seen = new Promise<string[]>((resolve) =>
      feed.subscribe((s) => {
        if (s.approvals.length) resolve(s.approvals.map((a) => a.requestId));
      }),
    );
    createRecord(fleet!.layout, recordInput('other-bbb222', { status: 'waiting_approval' }));
    await deliver(fleet!.layout, {
      from: 'other-bbb222',
      to: 'human',
      kind: 'approval_request',
      request_id: 'req2bbbbbbbb',
      tool: 'shell',
      priority: 'high',
      summary: 'other-bbb222 asks to run $ make',
      body: 'x',
    });
    feed.refresh();
    expect(await seen).toEqual(['req2bbbbbbbb']);
    feed.close();
  });
});
