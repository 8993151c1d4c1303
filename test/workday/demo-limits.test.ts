import { execa } from 'execa';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/fleet/proc.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import { listRecords } from '../../src/fleet/registry.js';
import { resolveLayout, type Layout } from '../../src/layout/layout.js';
import { CLI } from '../helpers/cli.js';
import { tempDir } from '../helpers/fleet.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';

/**
 * The offline demo tells the truth under any limits (docs/decisions.md "The demo under
 * limits"): with limits.max_running 2 its children wait in line and the round completes; with
 * 1 it says plainly that a helper could not start and why; a later message never replays
 * the summary; nothing it was handed is left unread; turn counters stay within their limit.
 */
let project: { dir: string; cleanup(): void } | undefined;
let tmux: TmuxServer | undefined;
afterEach(async () => {
  const pids = project
    ? listRecords(resolveLayout({ cwd: project.dir, env: {} })).flatMap((r) =>
        r.pid ? [[r.pid, r.pidStartTime] as const] : [],
      )
    : [];
  await tmux?.kill();
  await eventually(
    () => pids.every(([pid, start]) => !isProcessAlive(pid, start)),
    15_000,
    'the harnesses to exit',
  ).catch(() => undefined);
  if (project) {
    const dir = project.dir;
    await eventually(
      () => {
        rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
        return true;
      },
      15_000,
      `removal of ${dir}`,
    );
  }
  project = undefined;
  tmux = undefined;
});

/** A small git project with one TODO, and the person's config with `limits.max_running`. */
async function demoProject(maxRunning: number): Promise<string> {
  project = tempDir('flotilla-demo-limits-');
  const dir = project.dir;
  const git = (...args: string[]) =>
    execa('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: dir });
  await git('init', '-q');
  writeFileSync(join(dir, 'app.ts'), '// TODO: handle errors\nexport const x = 1;\n');
  await git('add', 'app.ts');
  await git('commit', '-qm', 'init');
  mkdirSync(join(dir, '.flotilla'));
  writeFileSync(join(dir, '.flotilla', 'config.yaml'), `limits:\n  max_running: ${maxRunning}\n`);
  return dir;
}

function envFor(dir: string, socket: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, '.xdg'),
    FLOTILLA_TMUX_SOCKET: socket,
    LANG: 'C.UTF-8',
  };
}

const flotilla = (dir: string, socket: string, ...args: string[]) =>
  execa(process.execPath, [CLI, ...args], { cwd: dir, env: envFor(dir, socket), extendEnv: false, reject: false });

const unread = (layout: Layout, owner: string): string[] => {
  try {
    return readdirSync(join(layout.inbox(owner), 'new')).filter((n) => !n.startsWith('.'));
  } catch {
    return [];
  }
};

/** Every ` · turn N/M · ` of a pane's status lines, as [N, M]. */
const turnCounters = (screen: string): [number, number][] =>
  [...screen.matchAll(/ · turn (\d+)\/(\d+) · /g)].map((m) => [Number(m[1]), Number(m[2])]);

async function startDemo(
  maxRunning: number,
): Promise<{ dir: string; layout: Layout; session: string; lead: AgentRecord }> {
  const dir = await demoProject(maxRunning);
  tmux = tmuxServer();
  const r = await flotilla(dir, tmux.socket, 'up', '--detach');
  expect(r.exitCode, r.stderr).toBe(0);
  const layout = resolveLayout({ cwd: dir, env: {} });
  const lead = await eventually(() => listRecords(layout).find((x) => x.name === 'demo-lead'), 60_000, 'the demo lead');
  const session = (await tmux.tmux('list-sessions', '-F', '#{session_name}')).trim();
  return { dir, layout, session, lead };
}

describe('the demo under limits', { timeout: 300_000 }, () => {
  it('at max_running 2 its children wait in line, the round completes and says so once; a later message is not answered with the summary; nothing handed on is left unread; turn counters stay within their limit', async () => {
    const { dir, layout, session, lead } = await startDemo(2);
    const finished = (r: AgentRecord) => r.lastTask?.status === 'completed' && r.status === 'idle';
    const kids = await eventually(
      () => {
        const recs = listRecords(layout);
        const l = recs.find((x) => x.id === lead.id);
        const k = recs.filter((x) => x.parentId === lead.id);
        return l && finished(l) && k.length === 2 && k.every(finished) ? k : undefined;
      },
      120_000,
      'the demo to finish',
    );
    expect(kids.map((k) => k.name).sort()).toEqual(['checker', 'todo-finder']);

    // What the person sees in the root's window: the summary of a round that really completed.
    const root = await tmux!.waitFor(`=${session}:root`, /✓ task 1 completed/, 60_000);
    expect(root).toContain('Demo summary: both helpers finished');
    for (const k of kids) expect(root).toContain(`## ${k.id}: completed`);
    expect(root).toContain('Result: 1 TODO/FIXME comments found.');
    expect(root).not.toContain('could not start');
    expect(readFileSync(layout.output(lead.id), 'utf8')).toContain('Demo summary: both helpers finished');

    // The children's completions were handed to the lead (by wait_for_agents or as mail): none is left unread.
    await eventually(() => unread(layout, lead.id).length === 0, 30_000, "the lead's inbox to be read");
    for (const k of kids) expect(unread(layout, k.id)).toEqual([]);

    // A later message is answered as what it is; the summary is not said again.
    expect((await flotilla(dir, tmux!.socket, 'send', lead.id, 'how did it go?')).exitCode).toBe(0);
    await eventually(
      () => listRecords(layout).find((x) => x.id === lead.id && x.lastTask?.task === 2 && x.status === 'idle'),
      60_000,
      'the lead to answer the message',
    );
    const after = await tmux!.waitFor(`=${session}:root`, /✓ task 2 completed/, 60_000);
    expect(after).toContain('Mail received after the round');
    expect(after.match(/Demo summary:/g)).toHaveLength(1);
    expect(readFileSync(layout.output(lead.id), 'utf8')).not.toContain('Demo summary');
    expect(unread(layout, lead.id)).toEqual([]);

    // Turn counters: every status line the panes show, and status, within the per-task limit.
    for (const target of [`=${session}:root`, ...kids.map((k) => `=${session}:${k.id}`)]) {
      const counters = turnCounters(await tmux!.capture(target));
      expect(counters.length, target).toBeGreaterThan(0);
      for (const [n, max] of counters) expect(n, `${target}: turn ${n}/${max}`).toBeLessThanOrEqual(max);
    }
    const status = await flotilla(dir, tmux!.socket, 'status');
    const turns = [...String(status.stdout).matchAll(/ (\d+)\/(\d+) /g)].map(
      (m) => [Number(m[1]), Number(m[2])] as const,
    );
    expect(turns).toHaveLength(3);
    for (const [n, max] of turns) expect(n).toBeLessThanOrEqual(max);
  });

  it('at max_running 1 it says plainly that its helpers could not start and why, and claims no summary', async () => {
    const { layout, session, lead } = await startDemo(1);
    await eventually(
      () => listRecords(layout).find((x) => x.id === lead.id && x.lastTask?.task === 1 && x.status === 'idle'),
      120_000,
      'the lead to end its task',
    );
    const root = await tmux!.waitFor(`=${session}:root`, /✓ task 1 completed/, 60_000);
    expect(root).toContain('A helper could not start, so the demo stops here without a summary');
    expect(root).toMatch(/limits\.max_running/);
    expect(root).not.toContain('Demo summary');
    const answer = readFileSync(layout.output(lead.id), 'utf8');
    expect(answer).toMatch(
      /^A helper could not start, so the demo stops here without a summary: spawn_agent failed: spawn refused: every running slot \(limits\.max_running 1\) is held by '[^']+', which waits for this spawn, so a child in line could never start — raise limits\.max_running to 2 or more/,
    );
    expect(listRecords(layout).filter((x) => x.parentId === lead.id)).toEqual([]);
  });
});
