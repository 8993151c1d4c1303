import { mkdirSync, realpathSync, unlinkSync } from 'node:fs';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlotillaError, isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';
import { liveRecords } from './live.js';
import { SlotCensus, type SlotHolder } from './slot-census.js';

// node:net and node:crypto load on first use: `flotilla status` reaches this module through
// the reaper on every call and, with no live agent, never opens a socket (§14 start-up).
const net = (): typeof import('node:net') => process.getBuiltinModule('node:net');
const crypto = (): typeof import('node:crypto') => process.getBuiltinModule('node:crypto');

/**
 * Concurrency slots (§5.3): at most `limits.max_running` agents run fleet-wide, exactly,
 * across processes, and a slot is freed by the kernel the instant its holder dies — even on
 * SIGKILL, with no stale lock to clean up.
 *
 * Node has no flock, so a slot is a listening unix socket: binding a name is atomic and
 * exclusive (EADDRINUSE = held), and the kernel unbinds it when the last descriptor closes,
 * which death does. On Linux the names live in the abstract namespace
 * (`\0flotilla-<hash of fleet root>-slot-<k>-<a|b>`), which has no files at all. Abstract
 * names are per network namespace: processes of one fleet must share one (they do unless
 * a container gives them separate ones).
 *
 * Each slot k has two names: `k-a`, the spawner's reservation, and `k-b`, the harness's hold
 * for its whole life. A slot is held while either is bound.
 *
 *   reserve (spawner):  bind k-a; then probe k-b (connect). Bound → close k-a, try k+1.
 *                       Free → slot k is reserved; the child gets `FLOTILLA_SLOT=k:<token>`.
 *   hold (harness):     bind k-b; then connect to k-a and send the token; the spawner
 *                       answers `ok` and only then closes k-a. No `ok` → release k-b, refuse.
 *
 * Why no third process Q can take a slot that is reserved or held (the race-freedom
 * argument). From the moment spawner S binds k-a until its harness H dies, k-a or k-b is
 * bound at every instant: S closes k-a only after H's token arrives, and H sends the token
 * only after it has bound k-b. Q reserves k only if it binds k-a (impossible while S has it)
 * and then finds k-b free (impossible once S let go of k-a, since H had bound k-b before).
 * So Q's reservation attempt fails throughout, and it moves on.
 * Why two harnesses never run on one slot: a harness runs only while it holds k-b, which
 * the kernel gives to one process at a time. A late harness whose spawner gave up (its
 * k-a went away, perhaps re-bound by another spawner) gets no `ok` for its token and lets
 * go of k-b; the rightful harness retries binding k-b briefly for that case.
 * Why a free slot is never lost: a process lets go of a k-a it bound only when k-b is
 * bound, i.e. the slot is held anyway; and death unbinds both names.
 *
 * macOS has no abstract namespace: the names are socket files under `layout.slotsDir` (or,
 * when that path is too long for a socket address, under the temp dir). A socket file left
 * by a dead holder refuses connections, so a bind that finds one unlinks it and retries.
 * Two processes cleaning the same stale file at once can, rarely, both believe they bound
 * it; the harness's own bind of k-b narrows that to a spawn refused by mistake, not an
 * extra agent. Tests run on Linux.
 */

const ABSTRACT = process.platform === 'linux';
/**
 * How long a harness waits for the spawner's `ok`. The spawner answers only once it waits for
 * the handoff, after its last write to the child's record (the tmux place), which on a loaded
 * machine can take seconds; a spawner that died closes the socket and is noticed at once.
 */
const HANDOFF_TIMEOUT_MS = 30_000;
const REBIND_WINDOW_MS = 2_000;

export interface SlotReservation {
  readonly index: number;
  /** Secret shared with the child so only it can complete the handoff. */
  readonly token: string;
  /** The value of `FLOTILLA_SLOT` for the child: `<index>:<token>`. */
  readonly envValue: string;
  /**
   * Lets the harness take the slot, then resolves true once it holds it (and this reservation
   * is gone); false on timeout (reservation released). Until this is called a harness that
   * asks is kept waiting: its first record write comes after the handoff, so the spawner must
   * have made its own last write to the record (launch.ts) — else one would overwrite the other.
   */
  waitForHandoff(timeoutMs: number): Promise<boolean>;
  /** Gives the reservation up; idempotent. */
  release(): void;
}

export interface SlotHold {
  readonly index: number;
  /** Gives the slot up; death does the same. Idempotent. */
  release(): void;
}

/** One fleet, one hash, however its root was reached: through a symlink it is still the same slots. */
function fleetHash(layout: Layout): string {
  let root = layout.root;
  try {
    root = realpathSync(root);
  } catch {
    // Not made yet: nobody can hold its slots through another path either.
  }
  return crypto().createHash('sha256').update(root).digest('hex').slice(0, 16);
}

/** The abstract names of this fleet's slots start with this (Linux; without the NUL). */
function slotPrefix(layout: Layout): string {
  return `flotilla-${fleetHash(layout)}-slot-`;
}

/** The socket address of one side of a slot. */
export function slotAddress(layout: Layout, index: number, side: 'a' | 'b'): string {
  const hash = fleetHash(layout);
  if (ABSTRACT) return `\0${slotPrefix(layout)}${index}-${side}`;
  const name = `slot-${index}-${side}.sock`;
  // sun_path is 104 bytes on macOS; long project paths fall back to the temp dir.
  const dir = join(layout.slotsDir, name).length < 100 ? layout.slotsDir : join(tmpdir(), `flotilla-${hash}`);
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}

/** True when something listens on the address. Errors other than "nobody there" count as bound: never over-admit. */
function probe(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net().createConnection({ path: address });
    sock.unref();
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', (err) => {
      sock.destroy();
      resolve(!(isErrno(err, 'ECONNREFUSED') || isErrno(err, 'ENOENT')));
    });
  });
}

function tryListen(address: string, onConnection: (sock: Socket) => void): Promise<Server | null> {
  return new Promise((resolve, reject) => {
    const server = net().createServer(onConnection);
    server.once('error', (err) => (isErrno(err, 'EADDRINUSE') ? resolve(null) : reject(err)));
    server.listen({ path: address }, () => {
      // A held slot must never keep a process from exiting.
      server.unref();
      resolve(server);
    });
  });
}

/** Binds an address; on macOS a socket file left by a dead holder is removed and the bind retried once. */
async function bind(address: string, onConnection: (sock: Socket) => void): Promise<Server | null> {
  const server = await tryListen(address, onConnection);
  if (server || ABSTRACT) return server;
  if (await probe(address)) return null;
  try {
    unlinkSync(address);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
  return tryListen(address, onConnection);
}

function closeServer(server: Server): void {
  // Socket files outlive their server on macOS unless removed (abstract names have no
  // file). Unlink while still bound: nobody else can have bound this path yet, so the
  // unlink never removes another holder's fresh file.
  if (!ABSTRACT) {
    const address = server.address();
    if (typeof address === 'string') {
      try {
        unlinkSync(address);
      } catch {
        // Already gone.
      }
    }
  }
  server.close();
}

/** Accepted connections on a hold are only probes: close them at once. */
function dropConnection(sock: Socket): void {
  sock.unref();
  sock.destroy();
}

/**
 * How many names held by impostors a reservation steps over. One process can bind many
 * names; past this many the spawn is refused rather than probing without end.
 */
const MAX_IGNORED = 256;

/** A look at who holds this fleet's slot names (slot-census.ts); live harnesses are looked at first. */
function censusOf(layout: Layout): SlotCensus {
  return new SlotCensus(slotPrefix(layout), () => new Set(liveRecords(layout).flatMap((r) => (r.pid ? [r.pid] : []))));
}

/**
 * Reserves a free slot for a child about to be opened; null when `cap` slots are taken.
 * A slot whose names are held by something that is not Flotilla (slot-census.ts) is stepped
 * over and not counted: the reservation looks one index further for each, so `cap` slots
 * stay available to harnesses whoever squats names (docs/security-fleet.md "Slots belong to
 * harnesses"). Every spawner sees the same squatters, so they still meet on the same index.
 */
export async function reserveSlot(layout: Layout, cap: number): Promise<SlotReservation | null> {
  const token = crypto().randomBytes(12).toString('hex');
  const census = ABSTRACT ? censusOf(layout) : null;
  const squatted = (index: number, side: 'a' | 'b'): boolean =>
    census?.isImpostor(slotAddress(layout, index, side).slice(1)) ?? false;
  let ignored = 0;
  for (let index = 0; index < cap + ignored && ignored <= MAX_IGNORED; index++) {
    const pending = new Set<Socket>();
    let settle: ((handed: boolean) => void) | undefined;
    let done = false;
    let waiting = false;
    let asked: Socket | null = null;
    const answer = (sock: Socket): void => {
      pending.delete(sock);
      // The harness gave up while the spawner was still writing: it holds nothing.
      if (sock.destroyed) return;
      sock.end('ok\n');
      finish(true);
    };
    const handed = new Promise<boolean>((resolve) => (settle = resolve));
    const finish = (ok: boolean): void => {
      if (done) return;
      done = true;
      closeServer(server!);
      for (const s of pending) s.destroy();
      settle!(ok);
    };
    const server: Server | null = await bind(slotAddress(layout, index, 'a'), (sock) => {
      sock.unref();
      if (done) return void sock.destroy();
      pending.add(sock);
      sock.on('error', () => pending.delete(sock));
      sock.on('close', () => pending.delete(sock));
      let buf = '';
      sock.setEncoding('utf8');
      sock.on('data', (chunk: string) => {
        buf += chunk;
        if (!buf.includes('\n')) return;
        if (buf.slice(0, buf.indexOf('\n')) !== token || done) return void sock.destroy();
        // The harness has bound k-b before sending the token, so k-a may go now — once the
        // spawner waits for the handoff.
        if (waiting) answer(sock);
        else asked = sock;
      });
    });
    if (!server) {
      // Held unless an impostor has the reservation name and no harness runs on the slot.
      if (squatted(index, 'a') && (!(await probe(slotAddress(layout, index, 'b'))) || squatted(index, 'b'))) ignored++;
      continue;
    }
    if (await probe(slotAddress(layout, index, 'b'))) {
      finish(false);
      if (squatted(index, 'b')) ignored++;
      continue;
    }
    return {
      index,
      token,
      envValue: `${index}:${token}`,
      waitForHandoff(timeoutMs) {
        if (done) return handed;
        waiting = true;
        if (asked) answer(asked);
        if (done) return handed;
        // A referenced timer keeps the spawner alive while it waits (the server is unref'd).
        const timer = setTimeout(() => finish(false), timeoutMs);
        return handed.finally(() => clearTimeout(timer));
      },
      release: () => finish(false),
    };
  }
  return null;
}

/**
 * Parses `FLOTILLA_SLOT` (`<index>:<token>`, and `:<fleet index>` on a bus with fleet-wide
 * caps: fleet-slot.ts); null when absent or malformed.
 */
export function parseSlotEnv(value: string | undefined): { index: number; token: string; fleet: number | null } | null {
  const m = /^(\d+):([0-9a-f]+)(?::(\d+))?$/.exec(value?.trim() ?? '');
  return m ? { index: Number(m[1]), token: m[2]!, fleet: m[3] === undefined ? null : Number(m[3]) } : null;
}

function holdOf(index: number, server: Server): SlotHold {
  let released = false;
  return {
    index,
    release() {
      if (released) return;
      released = true;
      closeServer(server);
    },
  };
}

/** Sends the token to the spawner's k-a and waits for its `ok`. */
function signalSpawner(address: string, token: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net().createConnection({ path: address });
    let buf = '';
    const end = (ok: boolean): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => end(false), timeoutMs);
    sock.setEncoding('utf8');
    sock.once('connect', () => sock.write(`${token}\n`));
    sock.on('data', (chunk: string) => {
      buf += chunk;
      if (buf.includes('\n')) end(buf.startsWith('ok\n'));
    });
    sock.once('error', () => end(false));
    sock.once('close', () => end(buf.startsWith('ok\n')));
  });
}

/**
 * The harness side of the handoff: binds k-b, then tells the spawner (which releases k-a).
 * Throws when the slot is someone else's or the spawner is gone or gave up.
 */
export async function holdSlot(layout: Layout, index: number, token: string): Promise<SlotHold> {
  const address = slotAddress(layout, index, 'b');
  const deadline = Date.now() + REBIND_WINDOW_MS;
  let server = await bind(address, dropConnection);
  // A late harness of a spawner that gave up may hold k-b for a moment before it learns so.
  while (!server && Date.now() < deadline) {
    await sleep(25);
    server = await bind(address, dropConnection);
  }
  if (!server) {
    throw new FlotillaError(
      `concurrency slot ${index} is held by another agent — spawn the agent again with spawn-agent`,
      { code: 'slot-taken' },
    );
  }
  const hold = holdOf(index, server);
  if (!(await signalSpawner(slotAddress(layout, index, 'a'), token, HANDOFF_TIMEOUT_MS))) {
    hold.release();
    throw new FlotillaError(
      `concurrency slot ${index} was not handed over: the spawner is gone or gave up waiting — spawn the agent again with spawn-agent`,
      { code: 'slot-handoff' },
    );
  }
  return hold;
}

/**
 * Takes a slot for this very process (e.g. `flotilla run` in a terminal): reserve, hold, drop the reservation. Null
 * when all are taken.
 */
export async function acquireSlot(layout: Layout, cap: number): Promise<SlotHold | null> {
  // Bounded: a k-b busy after a free probe is a passing late harness, not a steady state.
  for (let attempt = 0; attempt <= cap + 2; attempt++) {
    const reservation = await reserveSlot(layout, cap);
    if (!reservation) return null;
    const server = await bind(slotAddress(layout, reservation.index, 'b'), dropConnection);
    // k-b was free when probed; a late harness of a given-up spawner may have it now: try again.
    reservation.release();
    if (server) return holdOf(reservation.index, server);
  }
  return null;
}

/** Indexes of the slots in 0..cap-1 that Flotilla holds (reserved or running); names impostors hold do not count. */
export async function heldSlots(layout: Layout, cap: number): Promise<number[]> {
  const sides = await Promise.all(
    Array.from(
      { length: cap },
      async (_, k) => [await probe(slotAddress(layout, k, 'a')), await probe(slotAddress(layout, k, 'b'))] as const,
    ),
  );
  const census = ABSTRACT && sides.some(([a, b]) => a || b) ? censusOf(layout) : null;
  const counts = (k: number, side: 'a' | 'b'): boolean => !census?.isImpostor(slotAddress(layout, k, side).slice(1));
  return sides.flatMap(([a, b], k) => ((a && counts(k, 'a')) || (b && counts(k, 'b')) ? [k] : []));
}

/** Slot names held by processes that are not Flotilla's (Linux; empty elsewhere), for `status` and `doctor`. */
export function slotImpostors(layout: Layout): SlotHolder[] {
  if (!ABSTRACT) return [];
  return [...censusOf(layout).all().values()]
    .filter((h) => h.kind === 'impostor')
    .sort((x, y) => x.index - y.index || x.side.localeCompare(y.side));
}

/** One line per process squatting slot names: which, that they are ignored, and how to end it. */
export function impostorLines(holders: readonly SlotHolder[]): string[] {
  const byPid = new Map<number | null, SlotHolder[]>();
  for (const h of holders) byPid.set(h.pid, [...(byPid.get(h.pid) ?? []), h]);
  return [...byPid].map(([pid, hs]) => {
    const slots = [...new Set(hs.map((h) => h.index))];
    const names = `${hs.length} slot name${hs.length === 1 ? '' : 's'} (slot${slots.length === 1 ? '' : 's'} ${slots.length > 6 ? `${slots.slice(0, 6).join(', ')}, …` : slots.join(', ')})`;
    const who = pid === null ? 'a process of another user' : `pid ${pid} (${hs[0]!.command})`;
    return `${names} held by ${who}, not a Flotilla harness — ignored, they take no agent's place${pid === null ? '' : `; end it with: kill ${pid}`}`;
  });
}

/** How many of the slots in 0..cap-1 are held. */
export async function countHeld(layout: Layout, cap: number): Promise<number> {
  return (await heldSlots(layout, cap)).length;
}
