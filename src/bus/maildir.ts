import { listRecords, readRecord } from '../fleet/registry.js';
import { deliver } from '../inbox/deliver.js';
import type { Layout } from '../layout/layout.js';
import { localCaps } from './local-caps.js';
import type { Bus } from './types.js';

const nothingToStop = async (): Promise<void> => undefined;

/**
 * `fleet.bus: maildir` (§18): today's inbox on one filesystem, unchanged. Senders link the
 * message into the recipient's new/ themselves, so there is no connection and nothing to feed.
 */
export function maildirBus(layout: Layout): Bus {
  return {
    url: 'maildir',
    kind: 'maildir',
    mail: {
      deliver: (draft, opts) => deliver(layout, draft, opts),
      // Loaded when first used: reading mail parses it (gray-matter), which `flotilla send` never needs (§14).
      claim: async (owner, item) => (await import('../inbox/claim.js')).claim(layout, owner, item),
      receive: () => Promise.resolve(nothingToStop),
      collect: () => Promise.resolve(),
      waitingOnBus: () => Promise.resolve(new Map()),
    },
    caps: localCaps(layout),
    // One machine: the registry is the fleet's records, and there are no other hosts to hear from.
    records: {
      publish: () => Promise.resolve('local' as const),
      get: (id) => Promise.resolve(readRecord(layout, id)),
      list: () => Promise.resolve(listRecords(layout)),
      others: () => Promise.resolve([]),
      tree: () => Promise.resolve({ live: [], ended: new Map() }),
      find: (prefix) => Promise.resolve(listRecords(layout).filter((r) => r.id.startsWith(prefix))),
      live: () => Promise.resolve([]),
      recent: () => Promise.resolve({ records: [], more: {} }),
      beat: () => Promise.resolve(false),
      hosts: () => Promise.resolve([]),
      markLost: () => Promise.resolve(null),
      takeDone: () => Promise.resolve('won' as const),
    },
    // One machine: its audit.jsonl is the whole log.
    audit: {
      ship: () => Promise.resolve(0),
      read: () => Promise.resolve({ lines: [], next: 0 }),
    },
    gc: () => Promise.resolve({ records: [], trees: [], markers: 0 }),
    reach: () => Promise.resolve({ ok: true, detail: `maildir (${layout.inboxRoot})` }),
    close: () => Promise.resolve(),
  };
}
