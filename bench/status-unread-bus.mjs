// What `status` adds on a nats:// bus to count ended agents' mail still waiting on the stream
// (docs/design.md §18 item 4, docs/decisions-hosts.md "The bus carries mail"): one
// MailBus.waitingOnBus call for the ended agents it shows. Starts its own nats-server.
//   node bench/status-unread-bus.mjs [--owners 100] [--per 20] [--runs 30]
import { ownNats } from './bus.mjs';
import { median, percentile, round, tempProject } from './lib.mjs';
import { populate } from './scale.mjs';

const DIST = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, DIST).href);

export async function runStatusUnreadBusBench(opts = {}) {
  const owners = opts.owners ?? 100;
  const per = opts.per ?? 20;
  const runs = opts.runs ?? 30;
  const [{ layoutFor, ensureState }, { busFor, closeBuses }, { defaultConfig }] = await Promise.all([
    load('layout/layout.js'),
    load('bus/open.js'),
    load('config/schema.js'),
  ]);
  const nats = await ownNats();
  const p = tempProject('flotilla-bench-unread-');
  try {
    const layout = layoutFor(p.root, p.dir);
    ensureState(layout);
    // Ended agents, as many as status shows (its window of the 100 that ended last).
    populate(p.root, owners);
    const ids = Array.from({ length: owners }, (_, i) => `old${String(i).padStart(6, '0')}`);
    const bus = busFor(layout, { fleet: { ...defaultConfig().fleet, bus: nats.url, name: 'benchunread' } });
    for (let k = 0; k < per; k++)
      await Promise.all(
        ids.map((to) => bus.mail.deliver({ from: 'human', to, kind: 'message', body: `waiting ${k}` })),
      );
    const counted = [...(await bus.mail.waitingOnBus(ids)).values()].reduce((a, b) => a + b, 0);
    if (counted !== owners * per) throw new Error(`counted ${counted} of ${owners * per} waiting messages`);
    const t = [];
    for (let r = 0; r < runs; r++) {
      const s = performance.now();
      await bus.mail.waitingOnBus(ids);
      t.push(performance.now() - s);
    }
    await closeBuses();
    return {
      ended_agents: owners,
      messages_waiting: owners * per,
      runs,
      p50_ms: round(median(t), 2),
      p99_ms: round(percentile(t, 99), 2),
      load_average: (await import('node:os')).loadavg().map((x) => round(x, 1)),
    };
  } finally {
    p.cleanup();
    nats.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const num = (flag) => {
    const i = args.indexOf(flag);
    return i === -1 ? undefined : Number(args[i + 1]);
  };
  const r = await runStatusUnreadBusBench({ owners: num('--owners'), per: num('--per'), runs: num('--runs') });
  process.stdout.write(JSON.stringify(r, null, 2) + '\n');
}
