import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SlotCensus } from '../../src/fleet/slot-census.js';

/** Who holds a slot name (src/fleet/slot-census.ts), on Linux's abstract names. */

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function listen(name: string): Promise<Server> {
  const server = createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen({ path: `\0${name}` }, resolve));
  return server;
}

describe.runIf(process.platform === 'linux')('the slot census', () => {
  it('names a holder that no agent started as Flotilla: it counts', async () => {
    const prefix = `flotilla-census-${randomBytes(6).toString('hex')}-slot-`;
    await listen(`${prefix}0-b`);
    const census = new SlotCensus(prefix);
    expect(census.all().get(`${prefix}0-b`)).toMatchObject({ index: 0, side: 'b', pid: process.pid, kind: 'flotilla' });
    expect(census.isImpostor(`${prefix}0-b`)).toBe(false);
  });

  it('does not take a holder that let go during the look for an impostor (a spawn would step over its slot)', async () => {
    const prefix = `flotilla-census-${randomBytes(6).toString('hex')}-slot-`;
    const idle = await listen(`${prefix}2-b`);
    // The census reads the listening names, then asks for the live harnesses, then looks for each
    // name's holder: the harness goes idle (gives its slot back) in between, as under load.
    const census = new SlotCensus(prefix, () => {
      idle.close();
      return new Set();
    });
    expect(census.isImpostor(`${prefix}2-b`)).toBe(false);
    expect([...census.all().values()].filter((h) => h.kind === 'impostor')).toEqual([]);
  });
});
