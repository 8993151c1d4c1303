import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeBuses } from '../../src/bus/open.js';
import { BUSES, natsServer, type BusKind, type NatsServer } from '../helpers/nats.js';
import { fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';
import { eventually } from '../helpers/tmux.js';

/**
 * `status` counts the mail an ended agent will never read (docs/design.md §4: "status counts
 * it unread so a person sees mail nobody will read") on every bus (§18): on maildir it sits in
 * the agent's spool; on nats:// it waits on the fleet's stream, since no harness feeds that
 * spool any more, and is counted there without being moved — once, also after `flotilla
 * inbox` has brought it into the spool.
 */
describe.each(BUSES)("status and an ended agent's unread mail on the $bus bus", ({ bus: kind }: { bus: BusKind }) => {
  let server: NatsServer | undefined;
  let f: SpawnFleet | undefined;
  beforeAll(async () => {
    if (kind === 'nats') server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server?.kill();
  });
  afterEach(async () => {
    await closeBuses();
    await f?.close();
    f = undefined;
  });

  const unreadOf = async (id: string): Promise<number | undefined> => {
    const s = await f!.flotilla(['status', '--json']);
    expect(s.exitCode, s.stderr).toBe(0);
    return (JSON.parse(s.stdout) as { id: string; unread: number }[]).find((r) => r.id === id)?.unread;
  };

  it('counts each message sent to it after it ended, once, in text and JSON', { timeout: 180_000 }, async () => {
    f = spawnFleet({ config: server ? `fleet:\n  bus: ${server.url}\n` : '' });
    const one = await f.spawnAgent([
      '--wait',
      '--oneshot',
      '--id',
      'solo',
      '--model',
      `script:${fixture('worker.yaml')}`,
      'x',
    ]);
    expect(one.exitCode, one.stderr).toBe(0);
    // --wait returns on the task's completion, which a oneshot sends before its harness exits and ends its record.
    await eventually(() => f!.record('solo').status === 'completed', 30_000, 'the record ended');
    expect(await unreadOf('solo')).toBe(0);

    for (const body of ['nobody reads this', 'nor this']) {
      const sent = await f.flotilla(['send', 'solo', body]);
      expect(sent.exitCode, sent.stderr).toBe(0);
    }
    // On nats:// nothing has reached its spool: the count is the stream's.
    expect(f.mail('solo')).toHaveLength(kind === 'nats' ? 0 : 2);
    expect(await unreadOf('solo')).toBe(2);
    const text = await f.flotilla(['status']);
    expect(text.stdout.split('\n').find((l) => l.startsWith('solo'))).toMatch(
      /^solo\s+completed\s+0\s.*\s2\s+\[scripted\] Answer: result-of-solo$/,
    );

    // Brought into its spool by a person's look: still two, never four.
    const inbox = await f.flotilla(['inbox', 'solo']);
    expect(inbox.exitCode, inbox.stderr).toBe(0);
    expect(inbox.stdout).toContain('nobody reads this');
    expect(f.mail('solo')).toHaveLength(2);
    expect(await unreadOf('solo')).toBe(2);
  });
});
