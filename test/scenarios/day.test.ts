import { execa } from 'execa';
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { listRecords } from '../../src/fleet/registry.js';
import { readTask } from '../../src/tasks/store.js';
import { eventually } from '../helpers/tmux.js';
import { vendorCliPid } from '../runtimes/helpers.js';
import { Person } from './person.js';
import { HEADS, renderTour, tourCommands } from './tour.js';
import { openHostB, personConfigFile, shownConfig, type HostB } from './host-b.js';
import { filesContaining, openWorld, type World } from './world.js';

/**
 * A person's day on the defaults, one step after another on one fleet: each step
 * asserts what the person sees — panes, `status --json`, the board, files, `git log`, the
 * audit. Nothing is prepared but the world (world.ts); the product makes everything else.
 *
 * Switched off by hand once each (the product broken in a build, the day run, the breakage
 * never committed), the day fails at the step that needs it:
 * - file leases (a take never sees another holder): steps 3 and 4 — mate never waits in line,
 *   and the audit has no lease_queued;
 * - secret redaction (`redact` returns the text as is): step 4 — the deploy task's result
 *   carries the raw key;
 * - crash reopening (a dead claimant never counts as gone, and its harness reopens nothing):
 *   step 6 — the catalog stays claimed by gemini-mate;
 * - folder trust (`y` prints "trusted" and trusts nothing): step 1 — the folder is not on
 *   `trust --list` (before that check, step 3: codex-mate's commands waited for a person);
 * - schedules (the scheduler's fire returns at once): step 5 — no checker run;
 * - approvals from the dashboard (`a` says approved and answers nothing): step 3 — mate's key
 *   is never granted;
 * - secret expiry (the grant's timer ends nothing): step 4 — no secret_expired;
 * - merge conflict refusal (the `merge-tree` check skipped): step 7 — git's own merge fails and
 *   is aborted, so nothing is merged, but the refusal no longer names CHANGELOG.md;
 * - gc (`gcFleet` returns at once): step 8 — claude-mate's merged worktree stays.
 * Switching off one layer alone is not enough, by design: with only the dead agent's own
 * reopening off, the next claim's sweep reopens the task; with only the tool results'
 * redaction off, the fleet's redactor still replaces the key.
 */

let world: World;
let person: Person;
let session = '';
const DESK = 'desk:0';
const TOUR = fileURLToPath(new URL('../../docs/tour.md', import.meta.url));
const TOUR_HOSTS = fileURLToPath(new URL('../../docs/tour-hosts.md', import.meta.url));
const pane = (window: string): string => `=${session}:${window}`;

/** Each step's wall time, and the worlds' making: for the tour's "Where the time goes" (recorded, never asserted). */
const timings: { what: string; ms: number }[] = [];
let started = 0;
/** Runs `make`, noting its wall time as `what`. */
async function timed<T>(what: string, make: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await make();
  timings.push({ what, ms: performance.now() - t0 });
  return out;
}

beforeAll(async () => {
  world = await timed('making the world: a home, the forge, tmux, three fake providers', () => openWorld());
  person = new Person(world);
});
beforeEach(() => {
  started = performance.now();
});
afterEach(async (ctx) => {
  timings.push({ what: ctx.task.name, ms: performance.now() - started });
  if (ctx.task.result?.state === 'fail') await world.explain();
});
afterAll(async () => {
  await world?.dispose();
});

const status = (id: string): string | undefined => readTask(world.layout().board('fleet'), id)?.status;
const taken = (id: string): boolean => ['claimed', 'done'].includes(status(id) ?? '');

describe('a day on the defaults', { timeout: 600_000 }, () => {
  it('1. clone the shop and open the fleet; the folder asks to be trusted and y trusts it', async () => {
    person.begins(
      'clone and open the fleet',
      "The person clones the shop and runs `flotilla up` with the shop's own lead. The repository brings its own agent definitions in `.claude/agents/`; some of them ask for more than an untrusted folder may have (commands without asking, a schedule), so `up` says what they would set and asks once. `y` trusts the folder.",
    );
    await person.type(DESK, `git clone -q ${world.forge} shop && cd shop`);
    await person.type(DESK, 'flotilla up --agent lead --detach');
    const asked = await person.sees(DESK, /Trust this folder and use them\? \[y\/N\]/);
    // What the folder's own definitions would do, named before the person says yes.
    expect(asked).toContain(`this folder (${world.project}) is not trusted yet`);
    expect(asked).toMatch(/permission_mode/);
    await person.type(DESK, 'y');
    const opened = await person.sees(DESK, /attach with: tmux/);
    expect(opened).toContain(`flotilla: trusted ${world.project}`);
    // And trusted it is: the folder is on the person's list.
    const trusted = await person.flotilla(['trust', '--list'], { quiet: true });
    expect(trusted.stdout).toMatch(new RegExp(`^${world.project}  trusted `, 'm'));
    session = /opened session (\S+) with the dashboard and root agent/.exec(opened)?.[1] ?? '';
    expect(session).not.toBe('');
    await person.sees(pane('dashboard'), /lead-\w+/);
    // The lead waits for its first task in the root window.
    const lead = await eventually(
      () => listRecords(world.layout()).find((r) => r.name === 'lead' && r.status === 'idle'),
      60_000,
      'the lead idle',
    );
    expect(lead).toMatchObject({ depth: 0, spawnedBy: 'human', runtime: 'flotilla' });
  });

  it('2. the lead puts six tasks on the board and starts four teammates, each in its own worktree, claiming work', async () => {
    person.begins(
      'the lead plans and starts the team',
      "The person gives the lead its task in the `root` window. The lead (Flotilla's own harness) puts six tasks on the board — the docs task waits for the prices task — and starts a Claude Code, a Codex, a Gemini CLI and one of its own agents as teammates, each in its own git worktree, each claiming its task.",
    );
    await person.sees(pane('root'), /›/, false);
    await person.type(pane('root'), 'Ship 1.1 of the shop with the team.');
    // Claimed, or already done (Codex is quick).
    await eventually(() => ['prices', 'changelog', 'catalog', 'deploy'].every(taken), 300_000, 'four tasks claimed');
    const board = await person.flotilla(['task', 'list']);
    expect(board.exitCode, board.stderr).toBe(0);
    for (const [task, who] of [
      ['prices', 'claude-mate'],
      ['changelog', 'codex-mate'],
      ['catalog', 'gemini-mate'],
      ['deploy', 'mate'],
    ]) {
      expect(readTask(world.layout().board('fleet'), task!)).toMatchObject({
        status: expect.stringMatching(/^(claimed|done)$/),
        claimed_by: who,
      });
    }
    expect(readTask(world.layout().board('fleet'), 'docs')).toMatchObject({ status: 'open', blocked_by: ['prices'] });
    const st = await statusJson();
    for (const [id, runtime] of [
      ['claude-mate', 'claude'],
      ['codex-mate', 'codex'],
      ['gemini-mate', 'gemini'],
      ['mate', 'flotilla'],
    ]) {
      const a = st.find((x) => x.id === id);
      expect(a, id).toMatchObject({ runtime, work: { branch: `flotilla/${id}` } });
      expect(existsSync(join(world.layout().root, 'state', 'worktrees', id!))).toBe(true);
    }
    expect(readAudit(world.layout(), { event: 'task_created' }).lines).toHaveLength(6);
    const tree = await person.flotilla(['status']);
    for (const id of ['claude-mate', 'codex-mate', 'gemini-mate', 'mate']) expect(tree.stdout).toContain(id);
  });

  it('3. two teammates need README.md: mate, granted its key from the dashboard, waits in line behind claude-mate', async () => {
    person.begins(
      'the dashboard, and two teammates who need one file',
      'claude-mate leased `src/price.js` and `README.md` before changing them through its shell; it runs in `default` mode, so its command waits for a person, and it holds the files meanwhile. mate asks for the deploy key. Both show on the dashboard, first in line: `n` goes to the next agent that needs the person, `a` answers it. The person grants the key first. mate checks it, then wants to say in the README how the key is checked: its edit is refused, naming claude-mate, and it waits in line for the file: the dashboard line for mate says `⧗ README.md (held by claude-mate)`.',
    );
    // The key is granted once Codex holds its second task: mate, done with deploy, takes what is open.
    await eventually(() => status('changelog') === 'done' && taken('readme'), 300_000, 'codex-mate on its second task');
    const dash = await person.sees(
      pane('dashboard'),
      /Pending approvals(?=[\s\S]*claude-mate: \$ printf)(?=[\s\S]* mate: wants secret)/,
    );
    expect(dash).toMatch(/claude-mate: \$ printf 'export function formatPrice/);
    expect(dash).toMatch(/ mate: wants secret 'deploy-token' for 15 s: check the deploy key works/);
    expect(dash).toMatch(/2 approvals waiting/);
    await answerOnDashboard('mate', /granted 'deploy-token' to mate until/);

    // The selected agent's line on the dashboard names what it waits for and who holds it.
    await person.sees(pane('dashboard'), /mate · mate · depth 1 · leases: ⧗ README\.md \(held by claude-mate\)/);
    const st = await statusJson();
    expect(st.find((a) => a.id === 'mate')?.waitingForLeases).toEqual([
      expect.objectContaining({ checkout: world.project, paths: ['README.md'], heldBy: ['claude-mate'] }),
    ]);
    expect(st.find((a) => a.id === 'claude-mate')?.leases.map((l) => l.path)).toEqual(['src/price.js', 'README.md']);
    const leases = await person.flotilla(['lease', 'list']);
    expect(leases.stdout).toMatch(/README\.md\s+claude-mate\s.*prices show as dollars/);
    expect(leases.stdout).toMatch(/waiting: mate for README\.md/);
    // What mate's model was told: the holder, and how to wait.
    expect(readAudit(world.layout(), { event: 'lease_refused' }).lines).toContainEqual(
      expect.objectContaining({ agent: 'mate', path: 'README.md', holder: 'claude-mate' }),
    );
    expect(await person.sees(agentPane('mate'), /refused: README\.md is leased to agent claude-mate/, false)).toMatch(
      /waiting for it/,
    );
    expect(readFileSync(join(worktree('mate'), 'README.md'), 'utf8')).not.toContain('## Deploying');
  });

  it("4. the person approves claude-mate's command from the dashboard; its lease goes to mate, which goes on; the key expires and its value is nowhere", async () => {
    person.begins(
      'an approval, and the file handed on',
      "The person approves claude-mate's command from the dashboard. claude-mate commits, marks prices done and its task ends, so its leases go — `README.md` straight to mate, first in line, which edits it and goes on. The key reached only mate's command, for 15 seconds; everything anyone reads shows `[secret:deploy-token]`.",
    );
    await answerOnDashboard('claude-mate', /approved \S+: claude-mate may go on/);

    await eventually(
      () => status('prices') === 'done' && status('deploy') === 'done',
      300_000,
      'prices and deploy done',
    );
    const prices = readTask(world.layout().board('fleet'), 'prices')!;
    expect(prices.result).toBe('prices: Format prices as dollars');
    // The command saw the value; what anyone reads of it is the marker.
    expect(readTask(world.layout().board('fleet'), 'deploy')!.result).toBe(
      'deploy: key=[secret:deploy-token] Check the deploy key [exit code 0]',
    );
    // Handed on: claude-mate's task ended, and mate, next in line, got the file and went on.
    const noted = await eventually(
      async () => {
        const log = await branchLog('mate');
        return log.includes('Say how the deploy key is checked') ? log : undefined;
      },
      120_000,
      "mate's README commit",
    );
    expect(noted).toContain('Check the deploy key');
    const day = readAudit(world.layout(), {}).lines;
    const at = (event: string, agent: string): number =>
      day.findIndex((l) => l.event === event && l.agent === agent && l.path === 'README.md');
    expect(at('lease_queued', 'mate')).toBeGreaterThanOrEqual(0);
    expect(at('lease_queued', 'mate')).toBeLessThan(at('lease_released', 'claude-mate'));
    expect(at('lease_released', 'claude-mate')).toBeLessThan(at('lease_taken', 'mate'));
    expect(day[at('lease_taken', 'mate')]).toMatchObject({ via: 'queue' });
    expect(readAudit(world.layout(), { event: 'approval' }).lines).toContainEqual(
      expect.objectContaining({ agent: 'claude-mate', decision: 'approved', by: 'dashboard', via: 'claude' }),
    );
    expect(readAudit(world.layout(), { event: 'secret_granted' }).lines).toEqual([
      expect.objectContaining({ agent: 'mate', key: 'deploy-token', by: 'dashboard', ttl_secs: 15 }),
    ]);
    await eventually(
      () => readAudit(world.layout(), { event: 'secret_expired' }).lines.length === 1,
      120_000,
      'the grant to expire',
    );
    expect(filesContaining(world.home.dir, world.secret)).toEqual([]);
    for (const p of await allPanes()) expect(await world.tmux.capture(p)).not.toContain(world.secret);
  });

  it("5. the checker's schedule fires a check as a root while the team works", async () => {
    person.begins(
      'a schedule fires a check',
      "The shop's `checker` definition carries a schedule (every 30 seconds here). `up` started the scheduler in the `schedule` window, and its runs are roots of their own, reporting to the person.",
    );
    const run = await eventually(
      () => listRecords(world.layout()).find((r) => r.name === 'checker' && r.status === 'completed'),
      120_000,
      'a checker run',
    );
    expect(run).toMatchObject({ depth: 0, parentId: null, spawnedBy: 'cron' });
    expect(readFileSync(world.layout().output(run.id), 'utf8')).toContain('Build check: build ok');
    const dash = await person.sees(
      pane('dashboard'),
      /Schedules \(scheduler running\):\s+checker \*\/30 \* \* \* \* \* next \S+ last: completed/,
    );
    expect(dash).toMatch(/checker-\w+ \*\s+completed/);
    expect(readAudit(world.layout(), { event: 'schedule_fired' }).lines[0]).toMatchObject({ schedule: 'checker' });
  });

  it('6. gemini-mate is killed mid-task; its task reopens and mate finishes it', async () => {
    person.begins(
      'a teammate crashes; another finishes its task',
      "gemini-mate's CLI dies in the middle of its task (here: SIGKILL). Its task goes back on the board, with a note saying why, and mate, idle and watching the board, takes it and finishes it.",
    );
    const cli = vendorCliPid(world.layout(), 'gemini', world.env.FLOTILLA_GEMINI_BIN!, 'gemini-mate');
    expect(cli).toBeDefined();
    expect(status('catalog')).toBe('claimed');
    // The outside world: the CLI dies (out of memory, a crash), as SIGKILL does it.
    process.kill(cli!, 'SIGKILL');
    await eventually(
      () => listRecords(world.layout()).find((r) => r.id === 'gemini-mate')?.status === 'crashed',
      120_000,
      'gemini-mate crashed',
    );
    await eventually(() => status('catalog') === 'done', 300_000, 'catalog done by another');
    const catalog = readTask(world.layout().board('fleet'), 'catalog')!;
    expect(catalog).toMatchObject({ claimed_by: 'mate', result: 'catalog: Rebuild the catalog [exit code 0]' });
    expect(catalog.notes.map((n) => n.text)).toEqual([
      expect.stringMatching(/^reopened: its claimant gemini-mate ended \(.*killed \(SIGKILL\)/),
    ]);
    const shown = await person.flotilla(['task', 'show', 'catalog']);
    expect(shown.stdout).toContain('reopened: its claimant gemini-mate ended');
  });

  it('7. the lead sees the board settle; the person reviews and merges; one conflict is reported, not merged', async () => {
    person.begins(
      'review and merge',
      "The lead sees the board settle. The person reviews the teammates' branches and merges them; mate's branch changed the same lines of `CHANGELOG.md` as Codex's, so its merge is refused with the conflict and nothing of it is merged.",
    );
    await person.sees(pane('root'), /The board is settled/);
    const board = await person.flotilla(['task', 'list', '--json'], { quiet: true });
    expect((await person.flotilla(['task', 'list'])).stdout).toMatch(/board fleet: 0 open, 0 claimed, 6 done/);
    expect(JSON.parse(board.stdout).counts).toEqual({ open: 0, claimed: 0, done: 6, failed: 0, cancelled: 0 });
    const review = await person.flotilla(['review']);
    expect(review.exitCode, review.stderr).toBe(0);
    for (const id of ['claude-mate', 'codex-mate', 'mate']) expect(review.stdout).toContain(`flotilla/${id}`);
    for (const id of ['claude-mate', 'codex-mate']) {
      const merged = await person.flotilla(['merge', id]);
      expect(merged.exitCode, merged.stderr).toBe(0);
    }
    const before = await person.git('rev-parse', 'HEAD');
    const conflict = await person.flotilla(['merge', 'mate']);
    expect(conflict.exitCode).toBe(1);
    expect(`${conflict.stdout}${conflict.stderr}`).toMatch(/conflict[\s\S]*CHANGELOG\.md/i);
    expect(await person.git('rev-parse', 'HEAD')).toBe(before);
    expect(await person.git('status', '--porcelain')).toBe('');
    const log = await person.git('log', '--format=%s', 'main');
    expect(log).toContain('Format prices as dollars');
    expect(log).toContain('Open the 1.1 changelog');
    expect(log).toContain('Point the README at the changelog');
    expect(log).not.toContain('Document price formatting');
    expect(readFileSync(join(world.project, 'src', 'price.js'), 'utf8')).toContain('toFixed(2)');
  });

  it('8. the person ends the day: gc, nothing of the fleet left running, and the audit tells the day in order', async () => {
    person.begins(
      'end of the day',
      "The person pauses the schedule, cancels the lead's tree, closes the fleet's session and runs `flotilla gc`: nothing of the fleet is left running, merged worktrees are gone, the unmerged branch stays. `flotilla audit` tells the day in order.",
    );
    const lead = listRecords(world.layout()).find((r) => r.name === 'lead')!;
    expect((await person.flotilla(['schedule', 'pause', 'checker'])).exitCode).toBe(0);
    const cancelled = await person.flotilla(['cancel', lead.id, '--tree']);
    expect(cancelled.exitCode, cancelled.stderr).toBe(0);
    await person.type(DESK, `tmux kill-session -t ${session}`);
    await eventually(
      async () =>
        !(await world.tmux.tmux('has-session', '-t', `=${session}`).then(
          () => true,
          () => false,
        )),
      60_000,
      'the fleet session closed',
    );
    const gc = await person.flotilla(['gc']);
    expect(gc.exitCode, gc.stderr).toBe(0);
    // The person's own shell in the shop is not the fleet.
    const desk = Number(await world.tmux.tmux('display-message', '-p', '-t', DESK, '#{pane_pid}'));
    await eventually(() => fleetProcesses(desk).length === 0, 60_000, 'nothing of the fleet running').catch(() => {
      throw new Error(`still running in the shop (the person's shell is ${desk}): ${fleetProcesses(desk).join('; ')}`);
    });
    // Merged work is cleaned up; mate's unmerged branch stays for the person.
    expect(existsSync(join(world.layout().root, 'state', 'worktrees', 'claude-mate'))).toBe(false);
    expect(await person.git('branch', '--list', 'flotilla/*')).toMatch(/flotilla\/mate/);

    const audit = await person.flotilla(['audit']);
    expect(audit.exitCode).toBe(0);
    const day = readAudit(world.layout(), {}).lines.map(
      (l) => `${String(l.event)}${l.task ? `:${String(l.task)}` : ''}`,
    );
    const at = (e: string): number => day.indexOf(e);
    for (const e of [
      'task_created:prices',
      'task_claimed:prices',
      'secret_granted',
      'secret_expired',
      'task_reopened:catalog',
      'task_done:catalog',
      'gc',
    ])
      expect(at(e), e).toBeGreaterThanOrEqual(0);
    expect(at('task_created:prices')).toBeLessThan(at('task_claimed:prices'));
    expect(at('secret_granted')).toBeLessThan(at('secret_expired'));
    expect(at('task_reopened:catalog')).toBeLessThan(at('task_done:catalog'));
    expect(at('task_done:catalog')).toBeLessThan(day.lastIndexOf('gc'));
  });
});

/**
 * Step 9, the day again with half the team on a second machine: host a (this fleet, the
 * person's) and host b (its own home, clone, fleet root and tmux server, reached only through
 * a real sshd), one real nats-server between them as the fleet's bus. The lead on a puts the
 * board on the bus and starts two teammates whose definitions say `host: b` and one on a.
 */
let far: World;
let b: HostB;
let person2: Person;
let session2 = '';
const pane2 = (window: string): string => `=${session2}:${window}`;

describe('the same day again, half the team on host b over nats://', { timeout: 600_000 }, () => {
  beforeAll(async () => {
    far = await timed('making the second world: the same, and host b, its sshd and the nats-server', async () => {
      const w = await openWorld({ scripts: { codex: 'far-codex.yaml' } });
      b = await openHostB(w);
      return w;
    });
    person2 = new Person(far);
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail') {
      await far.explain();
      await explainB();
    }
  });
  afterAll(async () => {
    await b?.dispose();
    await far?.dispose();
  });

  /** A task of the fleet's board (on the bus), as `flotilla task show --json` on host a gives it. */
  const fleetTask = async (
    id: string,
  ): Promise<{ status: string; claimed_by?: string; result?: string } | undefined> => {
    const r = await person2.flotilla(['task', 'show', id, '--json'], { quiet: true });
    return r.exitCode === 0 ? JSON.parse(r.stdout) : undefined;
  };

  it('9a. the person names the bus and host b; the lead on a starts the team, half of it on b, and b claims from the board a made', async () => {
    person2.begins(
      'the same day, half the team on host b',
      "The next day the shop's team spreads over two machines. The person names the fleet's bus (a NATS server) and host b in their own config on a, gives b the same bus in its config, clones the shop on b and trusts it there. Then `flotilla up` on a as before, with `far-lead`: it puts the board on the bus and starts `far-codex` (Codex) and `far-mate` (ours), whose definitions say `host: b`, so they open on b. A task far-lead added on a is claimed on b, and `status` on a shows b's agents under their host.",
    );
    person2.writes(
      personConfigFile(far.home.dir),
      b.configOfA(),
      'cat > ~/.config/flotilla/config.yaml',
      shownConfig(b.configOfA()),
    );
    person2.writes(personConfigFile(b.home.dir), b.configOfB(), "ssh b 'cat > ~/.config/flotilla/config.yaml'");
    const cloned = await person2.onHost(b, 'b', `git clone -q ${far.forge} shop && cd shop && flotilla trust`);
    expect(cloned.exitCode, cloned.stderr).toBe(0);
    expect(cloned.stdout).toContain(`trusted ${b.project}`);

    await person2.type(DESK, `git clone -q ${far.forge} shop && cd shop`);
    await person2.type(DESK, 'flotilla up --agent far-lead --detach');
    await person2.sees(DESK, /Trust this folder and use them\? \[y\/N\]/);
    await person2.type(DESK, 'y');
    const opened = await person2.sees(DESK, /attach with: tmux/);
    session2 = /opened session (\S+) with the dashboard and root agent/.exec(opened)?.[1] ?? '';
    expect(session2).not.toBe('');
    await person2.sees(pane2('root'), /›/, false);
    await person2.type(pane2('root'), 'Ship 1.1 of the shop again, with half the team on host b.');

    // Added on a by far-lead; claimed on b by far-codex.
    await eventually(
      async () => ['claimed', 'done'].includes((await fleetTask('changelog'))?.status ?? ''),
      300_000,
      'changelog claimed on b',
    );
    expect(await fleetTask('changelog')).toMatchObject({ claimed_by: 'far-codex' });
    const onB = await eventually(
      () => {
        const rs = listRecords(b.layout()).filter((r) => ['far-codex', 'far-mate'].includes(r.id));
        return rs.length === 2 ? rs : undefined;
      },
      120_000,
      "b's two teammates",
    );
    const lead = listRecords(far.layout()).find((r) => r.name === 'far-lead')!;
    for (const r of onB) expect(r).toMatchObject({ host: 'b', parentId: lead.id, depth: 1, spawnedBy: 'agent' });
    expect(onB.find((r) => r.id === 'far-codex')).toMatchObject({ runtime: 'codex' });
    // Host a runs none of them: it sees b's teammates through the bus.
    expect(listRecords(far.layout()).filter((r) => ['far-codex', 'far-mate'].includes(r.id))).toEqual([]);
    const st = await person2.flotilla(['status']);
    expect(st.stdout).toMatch(/Host b — heartbeat/);
    expect(st.stdout).toMatch(/far-codex/);
    expect(st.stdout).toMatch(/far-mate/);
    const board = await person2.flotilla(['task', 'list']);
    expect(board.stdout).toMatch(/changelog\s.*far-codex/);
  });

  it("9b. far-mate's lease on b refuses near-mate's edit on a; near-mate asks for the file over the bus and goes on once far-mate lets go", async () => {
    person2.begins(
      'a lease across two machines',
      "far-mate, on b, leased `src/price.js` for half an hour, changed it and marked prices done, keeping the file. far-lead's wait sees both finish on b and starts near-mate on a, which takes the cents task the prices task held back; its edit of `src/price.js` in its own clone is refused, naming far-mate: the lease is the fleet's, on the bus, and holds in every clone of the shop. near-mate asks far-mate for it by mail and waits in line; far-mate lets go, and near-mate goes on.",
    );
    const refused = await eventually(
      () =>
        readAudit(far.layout(), { event: 'lease_refused' }).lines.find(
          (l) => l.agent === 'near-mate' && l.path === 'src/price.js',
        ),
      300_000,
      "near-mate's edit refused",
    );
    expect(refused).toMatchObject({ holder: 'far-mate' });
    expect(
      await person2.sees(agentPaneOf(far, 'near-mate'), /refused: src\/price\.js is leased to agent far-mate/),
    ).toMatch(/refused/);
    await eventually(
      async () => (await branchLogIn(far, 'near-mate')).includes('Round prices to whole cents'),
      180_000,
      "near-mate's commit",
    );
    const leases = await person2.flotilla(['lease', 'list']);
    expect(leases.stdout).not.toMatch(/far-mate/);
    expect(await fleetTask('prices')).toMatchObject({ status: 'done', claimed_by: 'far-mate' });
  });

  it("9c. the lead's wait sees b's teammates finish; review and merge on a see the work from b", async () => {
    person2.begins(
      'the board settles across both hosts',
      "far-lead's wait on the board ends once every task is done, wherever it was done; its wait for the two on b had shown their answers. On a, `flotilla review` asks b for its agents' work and lists it under its host, and `flotilla merge` brings each branch from b over ssh and merges it into the person's checkout.",
    );
    await person2.sees(pane2('root'), /The board is settled/);
    const listed = await person2.flotilla(['task', 'list', '--json'], { quiet: true });
    expect(JSON.parse(listed.stdout).counts).toEqual({ open: 0, claimed: 0, done: 3, failed: 0, cancelled: 0 });
    // Its wait for the two on b saw them finish there; their completions came over the bus.
    const root = await person2.sees(pane2('root'), /Host b's teammates finished: ## far-codex: completed/);
    expect(root).toMatch(/## far-mate: completed/);
    expect(root).toMatch(/✉ from far-codex \(completion\)|✉ from far-mate \(completion\)/);
    // The review on a asks b for its agents' work; merge brings each branch from b and merges it here.
    const review = await person2.flotilla(['review']);
    expect(review.exitCode, review.stderr).toBe(0);
    expect(review.stdout).toMatch(/^near-mate \(idle\)\s+flotilla\/near-mate → main/m);
    expect(review.stdout).toMatch(/^far-codex on b \(idle\)\s+flotilla\/far-codex → main\s+1 ahead/m);
    expect(review.stdout).toMatch(/^far-mate on b \(idle\)\s+flotilla\/far-mate → main\s+1 ahead/m);
    for (const id of ['far-codex', 'far-mate', 'near-mate']) {
      const merged = await person2.flotilla(['merge', id]);
      expect(merged.exitCode, merged.stderr).toBe(0);
    }
    const log = await person2.git('log', '--format=%s', 'main');
    for (const subject of ['Open the 1.1 changelog', 'Format prices as dollars', 'Round prices to whole cents'])
      expect(log).toContain(subject);
    const price = readFileSync(join(far.project, 'src', 'price.js'), 'utf8');
    expect(price).toContain('toFixed(2)');
    expect(price).toContain('roundCents');
    expect(await person2.git('status', '--porcelain')).toBe('');
  });

  it('9d. the end of the day on both hosts: gc, and the audit tells both hosts in order', async () => {
    person2.begins(
      'the end of the day, on both hosts',
      "The person cancels far-lead's tree, which ends its teammates on b there too, closes the fleet's session and runs `flotilla gc` on both hosts; a told b's checkout of the merges it made (`refs/flotilla/merged/<id>`), so b's gc removes b's two worktrees and their branches too. `flotilla audit` on a tells the day of both hosts, each line with the host that wrote it.",
    );
    const lead = listRecords(far.layout()).find((r) => r.name === 'far-lead')!;
    const cancelled = await person2.flotilla(['cancel', lead.id, '--tree']);
    expect(cancelled.exitCode, cancelled.stderr).toBe(0);
    // The tree's teammates on b are ended there.
    for (const id of ['near-mate', 'far-codex', 'far-mate']) expect(cancelled.stdout).toContain(id);
    for (const r of listRecords(b.layout()).filter((x) => ['far-codex', 'far-mate'].includes(x.id)))
      expect(r.status, r.id).toBe('cancelled');
    const audit = await person2.flotilla(['audit', '--json'], { quiet: true });
    const lines = audit.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const hosts = new Set(lines.map((l) => l.host));
    expect([...hosts].sort()).toEqual(['a', 'b']);
    const at = (event: string, agent: string): number => lines.findIndex((l) => l.event === event && l.agent === agent);
    expect(at('task_claimed', 'far-codex')).toBeGreaterThan(at('task_created', 'far-lead'));
    expect(lines[at('task_claimed', 'far-codex')]).toMatchObject({ host: 'b' });
    expect(at('lease_refused', 'near-mate')).toBeLessThan(
      lines.findIndex((l) => l.event === 'lease_released' && l.agent === 'far-mate'),
    );
    await person2.flotilla(['audit']);
    await person2.type(DESK, `tmux kill-session -t ${session2}`);
    const gc = await person2.flotilla(['gc']);
    expect(gc.exitCode, gc.stderr).toBe(0);
    const gcB = await person2.onHost(b, 'b', 'cd shop && flotilla gc');
    expect(gcB.exitCode, gcB.stderr).toBe(0);
    // a's merges reached b's checkout as refs/flotilla/merged/<id>: b's gc takes both branches as merged.
    expect(gcB.stdout).toMatch(/ 2 worktrees, 2 branches,/);
    expect(gcB.stdout).not.toContain('kept flotilla/');
    // Read by the test, not the person: the tour walks the person's commands only.
    const left = await b.ssh(`git -C ${b.project} for-each-ref refs/heads/flotilla refs/flotilla`);
    expect(left.stdout.trim(), left.stderr).toBe('');
  });
});

describe('the tour', () => {
  it('docs/tour.md and docs/tour-hosts.md walk this same day, command for command (npm run tour writes them)', () => {
    const places = {
      home: world.home.dir,
      forge: world.forge,
      socket: world.tmux.socket,
      also: [
        [far.forge, world.forge],
        [b.home.dir, '~'],
        [far.home.dir, world.home.dir],
        [b.bus.url, 'nats://bus.example:4222'],
        [b.fleet, 'shop'],
        [`port: ${b.sshd.port}`, 'port: 22'],
        [far.tmux.socket, world.tmux.socket],
      ] as const,
    };
    const pages = [
      [TOUR, renderTour(person.tour, places, timings)],
      [TOUR_HOSTS, renderTour(person2.tour, places, [], HEADS.hosts)],
    ] as const;
    for (const [file, tour] of pages) {
      const name = `docs/${basename(file)}`;
      if (process.env.FLOTILLA_TOUR_WRITE) writeFileSync(file, tour);
      expect(existsSync(file), `${name} is missing: run npm run tour`).toBe(true);
      expect(tourCommands(readFileSync(file, 'utf8')), `${name} is stale: run npm run tour`).toEqual(
        tourCommands(tour),
      );
    }
  });
});

/**
 * Live processes whose working folder is in the shop (the fleet's agents, their CLIs and commands), but the person's
 * own shell (`except`) and what it runs.
 */
function fleetProcesses(except: number): string[] {
  const parentOf = (pid: string): string => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? '';
  };
  const underPerson = (pid: string): boolean => {
    for (let p = pid, n = 0; p && p !== '0' && n < 50; p = parentOf(p), n++) if (Number(p) === except) return true;
    return false;
  };
  const out: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cwd = readlinkSync(`/proc/${name}/cwd`);
      if (!cwd.startsWith(world.project) || underPerson(name)) continue;
      out.push(
        `${name} (in ${cwd.slice(world.project.length) || '.'}): ${readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120)}`,
      );
    } catch {
      /* gone, or not ours */
    }
  }
  return out;
}

/**
 * Goes to `agent` with the dashboard's n (next that needs you), answers with a, and waits for what the dashboard says.
 */
async function answerOnDashboard(agent: string, said: RegExp): Promise<void> {
  const dash = pane('dashboard');
  // The selected row: `›`, then `!` when it needs the person.
  const selected = new RegExp(`›[! ]${agent} `);
  await person.pressUntil(dash, 'n', `${agent} is selected`, async () => selected.test(await person.looks(dash)));
  await person.press(dash, 'a');
  await person.sees(dash, said);
}

/** `flotilla status --json`, read quietly: the agents' records with their leases. */
async function statusJson(): Promise<
  {
    id: string;
    runtime?: string;
    work?: { branch: string };
    leases: { checkout: string; path: string }[];
    waitingForLeases: { checkout: string; paths: string[]; heldBy: string[] }[];
  }[]
> {
  return JSON.parse((await person.flotilla(['status', '--json'], { quiet: true })).stdout);
}

/** An agent's worktree. */
function worktree(id: string): string {
  return join(world.layout().root, 'state', 'worktrees', id);
}

/** The subjects of an agent's branch, newest first. */
async function branchLog(id: string): Promise<string> {
  return (await execa('git', ['log', '--format=%s', `flotilla/${id}`], { cwd: world.project })).stdout;
}

/** An agent's own pane. */
function agentPane(id: string): string {
  const pane = listRecords(world.layout()).find((r) => r.id === id)?.tmux?.paneId;
  if (!pane) throw new Error(`${id} has no pane`);
  return pane;
}

/** Every pane of the tmux server. */
async function allPanes(): Promise<string[]> {
  return (await world.tmux.tmux('list-panes', '-a', '-F', '#{pane_id}')).split('\n').filter(Boolean);
}

/** An agent's own pane in a world. */
function agentPaneOf(w: World, id: string): string {
  const pane = listRecords(w.layout()).find((r) => r.id === id)?.tmux?.paneId;
  if (!pane) throw new Error(`${id} has no pane`);
  return pane;
}

/** The subjects of an agent's branch in a world's clone, newest first ('' while it has none). */
async function branchLogIn(w: World, id: string): Promise<string> {
  const r = await execa('git', ['log', '--format=%s', `flotilla/${id}`], { cwd: w.project, reject: false });
  return r.exitCode === 0 ? String(r.stdout) : '';
}

/** What host b shows when a step of the second half fails: its agents' screens and logs. */
async function explainB(): Promise<void> {
  const l = b.layout();
  for (const r of listRecords(l)) {
    const screen = r.tmux ? await b.tmux.capture(r.tmux.paneId).catch(() => '(pane gone)') : '(no pane)';
    let log = '';
    try {
      log = readFileSync(l.log(r.id), 'utf8').slice(-1500);
    } catch {
      /* none */
    }
    console.error(
      `--- b: ${r.id} (${r.status}, ${r.exitReason ?? ''}) pane:\n${screen.trim().split('\n').slice(-30).join('\n')}\n--- log:\n${log}`,
    );
  }
}
