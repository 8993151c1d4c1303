import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptCalls, userTexts } from '../helpers/scripts.js';
import { eventually, type TmuxServer } from '../helpers/tmux.js';
import { trustProject } from '../helpers/trust.js';
import { isAlive } from '../spawn/helpers.js';
import { hostsOnBus, type TwoHosts } from './helpers.js';

/**
 * Faults are data (docs/design.md §17.8): a parent here has a child at work on `r1` (a real
 * sshd, r1's own fleet root and tmux server, one nats-server); when r1 stops beating past its
 * `lost_after_secs`, the child is marked `lost` and the parent's model is shown exactly one
 * completion for it — also after r1 comes back.
 */
const hosts = hostsOnBus();

const LOST_AFTER_SECS = 4;

/** The `<inbox-message …>` blocks of the last call a model was shown. */
function shownMail(log: string, pid: number | null): string[] {
  const last = scriptCalls(log)
    .filter((c) => c.pid === pid)
    .at(-1);
  if (!last) return [];
  return userTexts(last).flatMap((t) => t.match(/<inbox-message[\s\S]*?<\/inbox-message>/g) ?? []);
}

/** The pid of a tmux server. */
async function tmuxPid(tmux: TmuxServer): Promise<number> {
  return Number((await tmux.tmux('display-message', '-p', '#{pid}')).trim());
}

function auditOf(file: string): Record<string, unknown>[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  } catch {
    return [];
  }
}

/** A parent here with its child on r1 at work (a long command); r1 considered lost after LOST_AFTER_SECS here. */
async function childAtWork(): Promise<{
  pair: TwoHosts;
  parentId: string;
  childId: string;
  parentLog: string;
  logs: string;
}> {
  const logs = mkdtempSync(join(tmpdir(), 'flotilla-lost-logs-'));
  const pair = await hosts.open({
    localDefinitions: { parent: '../hosts/parent.yaml' },
    remoteDefinitions: { farworker: '../hosts/farsleeper.yaml' },
  });
  const { local, remote } = pair;
  appendFileSync(local.layout.configFile, `    lost_after_secs: ${LOST_AFTER_SECS}\n`);
  trustProject(local.project, local.env);
  const parentLog = join(logs, 'parent-calls.jsonl');
  const r = await local.spawnAgent(['--agent', 'parent', 'open a child on r1'], { FLOTILLA_SCRIPT_LOG: parentLog });
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  const child = await eventually(() => remote.records()[0], 120_000, 'the child on r1');
  // At work: its long command runs, so its task is open when r1 goes silent.
  await eventually(
    () => remote.record(child.id).status === 'working' && remote.record(child.id).turns >= 1,
    120_000,
    'the child at work on r1',
  );
  // The parent sees r1 beat before it goes silent.
  await eventually(
    async () => {
      const st = await local.flotilla(['status', '--json']);
      return (JSON.parse(st.stdout) as { id: string; lost?: boolean }[]).some(
        (x) => x.id === 'host:r1' && x.lost === false,
      );
    },
    60_000,
    'r1 beating',
  );
  return { pair, parentId: r.stdout, childId: child.id, parentLog, logs };
}

describe('agents of a silent host', { timeout: 300_000 }, () => {
  it("are marked lost within the configured time; the parent's model is shown one completion; status and wait here say lost; r1's own reaper sends none", async () => {
    const { pair, parentId, childId, parentLog, logs } = await childAtWork();
    const { local, remote } = pair;
    // r1 dies: its harness SIGKILLed and its tmux server killed (nothing of r1 beats any more). The
    // server is frozen first, so no pane-died hook or window's SIGHUP lets r1 end the child itself.
    const pid = remote.record(childId).pid!;
    const server = await tmuxPid(remote.tmux);
    process.kill(server, 'SIGSTOP');
    process.kill(pid, 'SIGKILL');
    process.kill(server, 'SIGKILL');
    await eventually(() => !isAlive(pid), 30_000, 'the child harness dead');

    const parentPid = () => local.record(parentId).pid;
    const lostShown = (m: string) => m.includes('kind="completion"') && m.includes(childId);
    const shown = await eventually(
      () => {
        const s = shownMail(parentLog, parentPid()).filter(lostShown);
        return s.length > 0 && s;
      },
      120_000,
      "the lost child's completion shown to the parent's model",
    );
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatch(/status \*\*lost\*\*: host r1: no heartbeat for \d+ s/);

    // status here shows it lost, with why; wait returns with the lost status (exit 1: not completed).
    const st = await local.flotilla(['status', '--json']);
    const rec = (JSON.parse(st.stdout) as { id: string; status: string; exitReason: string | null }[]).find(
      (x) => x.id === childId,
    );
    expect(rec?.status).toBe('lost');
    expect(rec?.exitReason).toMatch(/^host r1: no heartbeat for \d+ s$/);
    const text = await local.flotilla(['status']);
    expect(text.stdout).toMatch(new RegExp(`${childId}[^\\n]*lost`));
    const waited = await local.flotilla(['wait', childId]);
    expect(waited.stderr).toBe('');
    expect(waited.exitCode).toBe(1);
    expect(waited.stdout).toMatch(new RegExp(`^## ${childId}: lost \\(host r1: no heartbeat for \\d+ s\\)$`));
    // Exactly one process won the mark and told the parent.
    const marks = auditOf(local.layout.auditFile).filter((a) => a.event === 'agent_lost' && a.agent === childId);
    expect(marks).toEqual([expect.objectContaining({ to: parentId, told: true, agent_host: 'r1' })]);

    // r1's own reaper finds the dead harness later: the fleet's once-marker keeps its completion back.
    const there = await remote.flotilla(['status']);
    expect(there.exitCode).toBe(0);
    await eventually(
      () => auditOf(remote.layout.auditFile).some((a) => a.event === 'completion_withheld' && a.agent === childId),
      60_000,
      "r1's completion withheld",
    );
    expect(auditOf(remote.layout.auditFile).filter((a) => a.event === 'completion' && a.agent === childId)).toEqual([]);
    expect(local.mail(parentId).filter((m) => m.kind === 'completion' && m.from === childId)).toHaveLength(1);
    rmSync(logs, { recursive: true, force: true });
  });

  it('after a partition heals, the parent never gets a second completion and the healed agent ends itself', async () => {
    const { pair, parentId, childId, parentLog, logs } = await childAtWork();
    const { local, remote } = pair;
    // The only process of r1 that beats is the child's harness: stopped, r1 goes silent. Its tmux
    // server is stopped first and resumed last: tmux continues a pane's process that stops.
    const pid = remote.record(childId).pid!;
    const server = await tmuxPid(remote.tmux);
    process.kill(server, 'SIGSTOP');
    process.kill(pid, 'SIGSTOP');
    try {
      const parentPid = () => local.record(parentId).pid;
      const about = (m: string) => m.includes('kind="completion"') && m.includes(childId);
      await eventually(
        () => shownMail(parentLog, parentPid()).some(about),
        120_000,
        "the lost child's completion shown to the parent's model",
      );
    } finally {
      process.kill(pid, 'SIGCONT');
      process.kill(server, 'SIGCONT');
    }
    // Heard again, it finds itself marked lost and ends; its own completion is withheld.
    const ended = await eventually(
      () => {
        const r = remote.record(childId);
        return r.status === 'cancelled' && !isAlive(pid) && r;
      },
      120_000,
      'the healed child ended',
    );
    expect(ended.exitReason).toBe('marked lost while its host was unreachable');
    const audit = auditOf(remote.layout.auditFile);
    expect(audit.filter((a) => a.event === 'completion_withheld' && a.agent === childId)).toHaveLength(1);
    expect(audit.filter((a) => a.event === 'completion' && a.agent === childId)).toEqual([]);
    // The fleet's record stays what the parent was told.
    const st = await local.flotilla(['status', '--json']);
    expect((JSON.parse(st.stdout) as { id: string; status: string }[]).find((x) => x.id === childId)?.status).toBe(
      'lost',
    );
    const parentPid = () => local.record(parentId).pid;
    const shown = shownMail(parentLog, parentPid()).filter(
      (m) => m.includes('kind="completion"') && m.includes(childId),
    );
    expect(shown).toHaveLength(1);
    expect(shown[0]).toContain('**lost**');
    expect(local.mail(parentId).filter((m) => m.kind === 'completion' && m.from === childId)).toHaveLength(1);
    rmSync(logs, { recursive: true, force: true });
  });
});
