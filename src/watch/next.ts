import type { Layout } from '../layout/layout.js';
import { Tmux, socketArgs } from '../tmux/client.js';
import { parseTmuxEnv } from '../tmux/current.js';
import { nextNeedy } from './attention.js';
import { FleetReader } from './gather.js';
import type { WatchRow } from './rows.js';
import { markSeen } from './seen.js';

/**
 * `flotilla next` (design §2 "Attention"): the dashboard's `n` from any terminal. It finds
 * the next agent that needs a person — the one after the agent whose window the tmux client
 * shows, so running it again walks the list — and switches that client to the agent's
 * window: this terminal's client inside tmux, else the client most recently used on the
 * fleet's tmux server. A failure it takes you to counts as seen.
 */

export interface NextOptions {
  layout: Layout;
  /** The fleet's tmux server (config `tmux.socket` / FLOTILLA_TMUX_SOCKET). */
  socket: string | null;
  /** The fleet session, for the attach hint. */
  session: string;
  env?: NodeJS.ProcessEnv;
}

export interface NextResult {
  /** One line for the person. */
  line: string;
  /** 0: went there, or nothing needs you; 1: something needs you but no client could be switched. */
  code: number;
}

interface Client {
  name: string;
  windowId: string;
  tmux: Tmux;
}

export async function goNext(opts: NextOptions): Promise<NextResult> {
  const { layout } = opts;
  const reader = new FleetReader(layout);
  await reader.loadParser();
  const snap = reader.snapshot();
  if (snap.needs === 0)
    return { line: `nothing needs you (${snap.rows.length} agent${snap.rows.length === 1 ? '' : 's'})`, code: 0 };

  const client = await findClient(opts);
  const current = client ? (snap.rows.find((r) => r.tmux?.windowId === client.windowId && r.need)?.id ?? null) : null;
  const next = nextNeedy(snap.rows, current)!;
  const need = next.need!;
  if (need.kind === 'failed') markSeen(layout, next.id, need.stamp);
  const others = snap.needs - 1;
  const tail = others > 0 ? ` (${others} more need${others === 1 ? 's' : ''} you)` : '';
  const what = `${next.id} ${need.mark}: ${need.hint}`;
  if (!next.tmux)
    return { line: `${what} — it has no tmux window: read it with 'flotilla transcript ${next.id}'${tail}`, code: 0 };
  if (!client) {
    const attach = ['tmux', ...socketArgs(opts.socket), 'attach', '-t', opts.session].join(' ');
    return {
      line: `${what}${tail} — no tmux client to switch: attach with '${attach}', then run flotilla next again`,
      code: 1,
    };
  }
  const moved = await switchTo(client, next);
  if (moved) return { line: `${moved}${tail}`, code: 1 };
  return { line: `→ ${what}${tail}`, code: 0 };
}

/** This terminal's tmux client when it runs inside tmux; else the last-used client on the fleet's server. */
async function findClient(opts: NextOptions): Promise<Client | null> {
  const env = opts.env ?? process.env;
  const here = parseTmuxEnv(env);
  if (here) {
    const tmux = new Tmux({ socket: here.socketPath });
    const r = await tmux
      .exec(['display-message', '-p', ...(here.paneId ? ['-t', here.paneId] : []), '#{client_name} #{window_id}'])
      .catch(() => null);
    const [name, windowId] = r?.code === 0 ? r.stdout.trim().split(' ') : [];
    // Inside tmux but not in a client (a pane of a detached session): look on the fleet's server.
    if (name && windowId) return { name, windowId, tmux };
  }
  const tmux = new Tmux({ socket: opts.socket });
  const r = await tmux.exec(['list-clients', '-F', '#{client_activity} #{client_name} #{window_id}']).catch(() => null);
  if (!r || r.code !== 0) return null;
  const clients = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' '))
    .map(([activity, name, windowId]) => ({ activity: Number(activity), name: name!, windowId: windowId! }));
  clients.sort((a, b) => b.activity - a.activity);
  const best = clients[0];
  return best ? { name: best.name, windowId: best.windowId, tmux } : null;
}

/** Shows the row's window in the client; an error line, or null when done. */
async function switchTo(client: Client, row: WatchRow): Promise<string | null> {
  const win = row.tmux!;
  // The agent's window may live on another server (its record says which); a client can only show its own server's
  // windows.
  const tmux = win.socket ? new Tmux({ socket: win.socket }) : client.tmux;
  // The window first (switch-client alone may leave its session on another window), then the client.
  await tmux.exec(['select-window', '-t', win.windowId]);
  const r = await tmux.exec(['switch-client', '-c', client.name, '-t', win.windowId]);
  if (r.code === 0) return null;
  const why = r.stderr.trim().split('\n')[0] || 'failed';
  return `cannot switch to ${row.id} (window ${win.windowId}): ${why} — attach with 'flotilla attach ${row.id}'`;
}
