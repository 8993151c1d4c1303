import { afterAll, afterEach, beforeAll } from 'vitest';
import { closeBuses } from '../../src/bus/open.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';
import { natsServer, type NatsServer } from './nats.js';

/**
 * A real nats-server for one `describe` block, and the fleets its tests open on it: each
 * test's fleets are closed after it (their bus connections first), the server after the block.
 */
export function natsFleets(): { url(): string; open(config: string): SpawnFleet } {
  let server: NatsServer | undefined;
  const fleets: SpawnFleet[] = [];
  beforeAll(async () => {
    server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server?.kill();
  });
  afterEach(async () => {
    await closeBuses();
    for (const f of fleets.splice(0)) await f.close();
  });
  return {
    url: () => server!.url,
    open(config) {
      const f = spawnFleet({ config });
      fleets.push(f);
      return f;
    },
  };
}
