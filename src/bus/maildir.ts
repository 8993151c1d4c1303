import { claim } from '../inbox/claim.js';
import { deliver } from '../inbox/deliver.js';
import type { Layout } from '../layout/layout.js';
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
      claim: (owner, item) => claim(layout, owner, item),
      receive: () => Promise.resolve(nothingToStop),
      collect: () => Promise.resolve(),
    },
    reach: () => Promise.resolve({ ok: true, detail: `maildir (${layout.inboxRoot})` }),
    close: () => Promise.resolve(),
  };
}
