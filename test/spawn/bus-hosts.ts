import { afterAll, afterEach, beforeAll } from 'vitest';
import { closeBuses } from '../../src/bus/open.js';
import { natsServer, type NatsServer } from '../helpers/nats.js';
import { spawnFleet, type SpawnFleet } from './helpers.js';

/**
 * A test file's fleet roots that call themselves hosts and share one real nats-server as one
 * fleet (docs/design.md §18), each with `config` besides its `fleet:` block: the server is the
 * file's, each test's hosts are closed after it.
 */
export function hostsOnBus(config: string): {
  url(): string;
  host(name: string, fleet: string, definitions: Record<string, string>): SpawnFleet;
} {
  let server: NatsServer | undefined;
  let hosts: SpawnFleet[] = [];
  beforeAll(async () => {
    server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await closeBuses();
    await server?.kill();
  });
  afterEach(async () => {
    await closeBuses();
    await Promise.all(hosts.map((h) => h.close()));
    hosts = [];
  });
  return {
    url: () => server!.url,
    host(name, fleet, definitions) {
      const f = spawnFleet({
        definitions,
        config: `fleet:\n  bus: ${server!.url}\n  name: ${fleet}\n  host: ${name}\n${config}`,
      });
      hosts.push(f);
      return f;
    },
  };
}
