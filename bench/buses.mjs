// The buses a benchmark runs on (docs/design.md §18): `maildir`, and `nats` against a
// nats-server of its own (bench/bus.mjs ownNats) unless a URL is given. A benchmark hands
// `busEnv(bus)` to every process it starts (FLOTILLA_FLEET_BUS, as a person's config would
// say), so it measures whatever store the fleet uses on that bus.
import { ownNats } from './bus.mjs';

const FLEET = 'benchteam';

/** The environment that puts a process of the benchmark's fleet on `bus` (a URL or `maildir`). */
export function busEnv(bus) {
  return { FLOTILLA_FLEET_BUS: bus, FLOTILLA_FLEET_NAME: FLEET };
}

/** Runs `fn(busUrl)` once per bus (`buses`: maildir and/or nats); `{ maildir: …, nats: … }`. */
export async function withBuses({ buses = ['maildir', 'nats'], nats } = {}, fn) {
  const out = {};
  let server = null;
  try {
    for (const b of buses) {
      if (b !== 'maildir' && b !== 'nats')
        throw new Error(`unknown bus '${b}': give maildir or nats (and --nats URL for a server of yours)`);
      let url = 'maildir';
      if (b === 'nats') url = nats ?? (server ??= await ownNats()).url;
      out[b] = { bus: url, ...(await fn(url)) };
    }
  } finally {
    server?.stop();
  }
  return out;
}
