import { existsSync } from 'node:fs';
import { cliConfig, contextOf, noFleetLine, type Globals } from '../context.js';
import { terminalColumns, writeOut } from '../output.js';
import type { CommandSpec, Parsed } from '../spec.js';

/** `flotilla status` / `ls` (§2): the agent tree; dead harnesses are reaped first. On the fast path (fast.ts). */
export const spec: CommandSpec = {
  name: 'status',
  fast: true,
  aliases: ['ls'],
  description: 'the agent tree with state, depth, turns, tokens, cost, elapsed, unread mail and last line',
  args: [],
  options: [
    {
      flags: '--json',
      description:
        'print an array of registry records, each with its unread count, the file leases it holds or waits for and, for a worktree agent, work: {branch, base, ahead, behind}, then one {id: "board:NAME", status: "board", counts} per task board',
    },
    { flags: '--all', description: 'list every finished agent, not only the 100 that ended last' },
  ],
};

export async function run(parsed: Parsed, globals: Globals): Promise<void> {
  const opts = parsed.opts as { json?: boolean; all?: boolean };
  const { layout } = contextOf(globals, { createState: false });
  // A read-only look never makes a fleet root (it would show up in the person's checkout).
  const none = noFleetLine(layout);
  if (none) {
    writeOut(opts.json ? '[]\n' : `${none}\n`);
    return;
  }
  const { config } = await cliConfig(layout);
  const view = await gather(layout, config, opts.all === true);
  if (opts.json) printJson(view);
  else await printText(layout, config, view);
}

type Layout = import('../../layout/layout.js').Layout;
type Config = import('../../config/schema.js').Config;
type Bus = import('../../bus/types.js').Bus;
type AgentRecord = import('../../fleet/record.js').AgentRecord;
type Entry = Parameters<typeof import('../../fleet/status-view.js').formatStatus>[0][number] & {
  standing?: import('../../work/standing.js').Standing;
};

/** What a look at the fleet found, before it is printed as text or JSON. */
interface StatusView {
  bus: Bus | null;
  entries: Entry[];
  /** Finished agents left out of the window (--all shows them). */
  hidden: number;
  /** spawn-agent --queue processes in line for a running slot, with no record yet. */
  waiting: import('../../fleet/slot-queue.js').InLine[];
  corrupt: Map<string, string>;
  leases: import('../../leases/summary.js').LeaseSummary | null;
  boards: { board: string; counts: import('../../tasks/list.js').Counts }[];
  hostGroups: HostGroup[] | null;
}

interface HostGroup {
  host: string;
  beat: import('../../spawn/host-groups.js').HostGroup['beat'];
  records: AgentRecord[];
  hidden: number;
}

async function gather(layout: Layout, config: Config, all: boolean): Promise<StatusView> {
  // On a bus, mail for the person waits there until someone looks (§18): bring it in first.
  const bus = config.fleet.bus === 'maildir' ? null : (await import('../../bus/open.js')).busFor(layout, config);
  // The bus's reads that wait on nothing here go out together: the hosts' heartbeats (read
  // once, for the lost marks and the host groups), the boards and leases, the person's mail.
  const beats = bus?.records.hosts();
  beats?.catch(() => undefined);
  // On a bus the boards and leases are the fleet's, read there (§15, §16, §18); a bus that does not answer shows none.
  const teamRead = bus ? fleetTeam(layout) : null;
  // A host past its lost_after_secs has its live agents marked lost, each parent told once (§17.8).
  const lost = bus ? import('../../lifecycle/lost.js').then((m) => m.markLostHosts(layout, bus, beats)) : null;
  await Promise.all([bus?.mail.collect(['human']), lost]);
  // A look holds a connection anyway: this host's audit lines go with it (§9; sent as the bus closes).
  void bus?.audit.ship();
  // The other hosts' records, read as they stand after the lost marks, while this host's files
  // are read below; grouped once those say which ids are this host's.
  let localIds: (ids: Set<string>) => void = () => undefined;
  const known = new Promise<Set<string>>((resolve) => (localIds = resolve));
  const hostGroupsRead = bus ? otherHostGroups(bus, config, known, all, beats) : null;
  hostGroupsRead?.catch(() => undefined);
  const [{ reconcileDead }, { listRecords }, { liveRecords, recentRecords }, { unreadCount }, { queueLine }] =
    await Promise.all([
      import('../../lifecycle/reconcile.js'),
      import('../../fleet/registry.js'),
      import('../../fleet/live.js'),
      import('../../inbox/maildir.js'),
      import('../../fleet/slot-queue.js'),
    ]);
  // Each record is read once: the live ones, reaped if dead, then the window of finished ones.
  // A damaged record hides nothing else; it is listed with what to do about it.
  const corrupt = new Map<string, string>();
  const onCorrupt = (c: { id: string; error: string }) => corrupt.set(c.id, c.error);
  const live = liveRecords(layout, undefined, onCorrupt);
  const reaped = new Map((await reconcileDead(layout, config, { records: live })).map((r) => [r.id, r]));
  const { records, hidden } = all
    ? { records: listRecords(layout, onCorrupt), hidden: 0 }
    : recentRecords(
        layout,
        undefined,
        undefined,
        live.map((r) => reaped.get(r.id) ?? r),
      );
  // The line for running slots: agents waiting for new work to start, and spawn-agent --queue not started yet.
  const line = queueLine(layout);
  const place = new Map(line.flatMap((q) => (q.agentId ? [[q.agentId, q.position] as const] : [])));
  // Agents' branches against their bases, in worktrees and in place (§12), read only when some agent has one.
  const standing = records.some((r) => r.base)
    ? await import('../../work/standing.js').then(async (m) => ({
        of: await m.branchStanding(layout, records),
        mark: m.standingMark,
      }))
    : null;
  const entries = records.map((record) => {
    const work = standing?.of.get(record.id);
    return {
      record,
      unread: unreadCount(layout, record.id),
      queuePosition: record.status === 'queued' ? (place.get(record.id) ?? null) : null,
      ...(work ? { work: standing!.mark(work), standing: work } : {}),
    };
  });
  const ids = new Set(records.map((r) => r.id));
  localIds(ids);
  const waiting = line.filter((q) => q.agentId && !ids.has(q.agentId) && !corrupt.has(q.agentId));
  // On a bus, an ended agent's mail waits there (no harness feeds its spool): counted as on maildir, where it sits in
  // its spool (§4, §18).
  const [, team, hostGroups] = bus
    ? await Promise.all([countWaitingOnBus(bus, entries), teamRead, hostGroupsRead])
    : [undefined, null, null];
  // File leases (§16), loaded only when a fleet has ever had one.
  const leases = team
    ? team.leases
    : existsSync(layout.leasesDir)
      ? await import('../../leases/summary.js').then((m) => m.leaseSummary(layout))
      : null;
  // Task boards (§15): counts from each board's indexes, loaded only when a fleet has a board.
  const boards = team
    ? team.boards
    : existsSync(layout.boardsDir)
      ? (await import('../../tasks/list.js')).everyBoardCounts(layout)
      : [];
  return { bus, entries, hidden, waiting, corrupt, leases, boards, hostGroups };
}

/**
 * On a bus, every other host's agents, grouped by host (§17): each shown as this one is, the last to finish unless
 * --all.
 */
async function otherHostGroups(
  bus: Bus,
  config: Config,
  known: Promise<ReadonlySet<string>>,
  all: boolean,
  beats: Promise<import('../../bus/types.js').HostBeat[]> | undefined,
): Promise<HostGroup[] | null> {
  const { RECENT_WINDOW } = await import('../../fleet/live.js');
  const { otherHosts, windowed } = await import('../../spawn/host-groups.js');
  const groups = await otherHosts(
    bus,
    (await import('../../hosts/self.js')).selfHost(config.fleet),
    known,
    all ? undefined : RECENT_WINDOW,
    beats,
  );
  // null: the bus did not answer, and no other host is shown.
  return (
    groups?.map((g) => {
      const w = all ? { records: g.records, hidden: 0 } : windowed(g.records, RECENT_WINDOW);
      return { ...g, records: w.records, hidden: w.hidden + g.endedNotRead };
    }) ?? null
  );
}

function printJson({ entries, waiting, corrupt, leases, boards, hostGroups }: StatusView): void {
  const hostRows = (hostGroups ?? []).flatMap((g) => [
    {
      id: `host:${g.host}`,
      status: 'host',
      host: g.host,
      heartbeatAgeMs: g.beat?.ageMs ?? null,
      lost: g.beat ? g.beat.lost : true,
    },
    ...g.records.map((r) => ({ ...r, unread: null })),
  ]);
  const tasks = boards.map((b) => ({ id: `board:${b.board}`, status: 'board', board: b.board, counts: b.counts }));
  const bad = [...corrupt].map(([id, error]) => ({ id, status: 'corrupt', error }));
  const spawns = waiting.map((q) => ({
    id: q.agentId,
    status: 'queued',
    queuePosition: q.position,
    pid: q.pid,
    started: false,
  }));
  const held = (id: string) =>
    leases ? { leases: leases.heldBy(id), waitingForLeases: leases.waitsOf(id) } : { leases: [], waitingForLeases: [] };
  writeOut(
    JSON.stringify(
      [
        ...entries.map((e) => ({
          ...e.record,
          unread: e.unread,
          ...(e.record.status === 'queued' ? { queuePosition: e.queuePosition } : {}),
          ...held(e.record.id),
          ...(e.standing ? { work: e.standing } : {}),
        })),
        ...spawns,
        ...bad,
        ...tasks,
        ...hostRows,
      ],
      null,
      2,
    ) + '\n',
  );
}

async function printText(layout: Layout, config: Config, view: StatusView): Promise<void> {
  const { bus, entries, hidden, waiting, corrupt, leases, boards, hostGroups } = view;
  const [{ formatStatus }, { unreadCount }] = await Promise.all([
    import('../../fleet/status-view.js'),
    import('../../inbox/maildir.js'),
  ]);
  const width = terminalColumns();
  if (hostGroups) {
    const { hostHeading } = await import('../../spawn/host-groups.js');
    writeOut(`${hostHeading((await import('../../hosts/self.js')).selfHost(config.fleet), null, true)}\n`);
    writeOut(formatStatus(entries, width ? { width } : {}) + '\n');
    for (const g of hostGroups) {
      writeOut(`\n${hostHeading(g.host, g.beat)}\n`);
      writeOut(
        g.records.length
          ? formatStatus(
              g.records.map((record) => ({ record, unread: 0, queuePosition: null })),
              width ? { width } : {},
            ) + '\n'
          : '  no agents\n',
      );
      if (g.hidden > 0) writeOut(`… ${thousands(g.hidden)} finished on ${g.host} — flotilla status --all\n`);
    }
  } else writeOut(formatStatus(entries, width ? { width } : {}) + '\n');
  if (waiting.length) {
    writeOut(`\nIn line for a running slot (limits.max_running ${config.limits.max_running}), not started yet:\n`);
    for (const q of waiting) writeOut(`  #${q.position}  ${q.agentId}  spawn-agent --queue, pid ${q.pid}\n`);
  }
  for (const [id, error] of corrupt) writeOut(`${id}  corrupt  ${error}\n`);
  const { slotImpostors, impostorLines } = await import('../../fleet/slots.js');
  for (const line of impostorLines(slotImpostors(layout))) writeOut(`${line}\n`);
  if (hidden > 0) writeOut(`… ${thousands(hidden)} finished — flotilla status --all\n`);
  if (leases && leases.lines.length) writeOut(`\nFile leases (flotilla lease list):\n${leases.lines.join('\n')}\n`);
  const { scheduleSummary, formatScheduleSummary } = await import('../../schedule/status-lines.js');
  const schedules = scheduleSummary(layout);
  if (schedules) writeOut(`\n${formatScheduleSummary(schedules).join('\n')}\n`);
  if (boards.length > 0) {
    const { countsLine } = await import('../../tasks/view.js');
    writeOut(
      `\nTask boards (flotilla task list --board NAME):\n${boards.map((b) => `  ${countsLine(b.board, b.counts)}`).join('\n')}\n`,
    );
  }
  const human = unreadCount(layout, 'human');
  if (human) writeOut(`\n${human} unread message${human === 1 ? '' : 's'} for you — flotilla inbox\n`);
  if (bus) {
    const r = await bus.reach();
    writeOut(`\nBus: ${r.ok ? 'reachable' : 'UNREACHABLE'} — ${r.detail}\n`);
  }
}

/** Adds to each ended agent's unread count its mail still on the bus: one request for them all. */
async function countWaitingOnBus(
  bus: import('../../bus/types.js').Bus,
  entries: { record: import('../../fleet/record.js').AgentRecord; unread: number }[],
): Promise<void> {
  const { isTerminal } = await import('../../fleet/record-status.js');
  const ended = entries.filter((e) => isTerminal(e.record.status));
  if (!ended.length) return;
  const waiting = await bus.mail.waitingOnBus(ended.map((e) => e.record.id));
  for (const e of ended) e.unread += waiting.get(e.record.id) ?? 0;
}

/** The fleet's boards and leases from the bus, or null when it does not answer within 5 s (status must answer). */
async function fleetTeam(layout: import('../../layout/layout.js').Layout): Promise<{
  boards: { board: string; counts: import('../../tasks/list.js').Counts }[];
  leases: import('../../leases/summary.js').LeaseSummary | null;
} | null> {
  const { sharedKvFor } = await import('../../bus/shared.js');
  // A store nobody has written loads none of its code (as a maildir fleet with no boards or leases directory).
  const used = async (which: 'board' | 'leases') => !(await (await sharedKvFor(layout, which))?.empty());
  const read = (async () => {
    const [board, leases] = await Promise.all([used('board'), used('leases')]);
    const [boards, summary] = await Promise.all([
      board ? import('../../team-store/board.js').then((m) => m.allBoardCounts(layout)) : [],
      leases
        ? Promise.all([import('../../team-store/leases.js'), import('../../leases/summary.js')]).then(async ([l, s]) =>
            s.leaseSummary(layout, await l.listLeases(layout)),
          )
        : null,
    ]);
    return { boards, leases: summary };
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), 5_000);
  });
  try {
    return await Promise.race([read.catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** 4890 → `4,890`. Not toLocaleString: its first call loads ICU's number formatting, ~35 ms (§14). */
function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+$)/g, ',');
}
