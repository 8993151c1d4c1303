import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptCalls, userTexts } from '../helpers/scripts.js';
import { startSshd } from '../helpers/sshd.js';
import { eventually } from '../helpers/tmux.js';
import { hostsOnBus } from './helpers.js';

/**
 * An agent's `spawn-agent --host NAME` (docs/design.md §17.5) on a fleet whose two hosts share
 * a nats-server (§18): the parent — a scripted model on this host, its commands in its sandbox
 * — opens its child on `r1` (a real sshd, that host's own fleet root and tmux server), and
 * what each model is shown is read from what it was called with.
 */
const hosts = hostsOnBus();

const PARENT = { parent: '../hosts/parent.yaml' };
const CHILD = { farworker: '../hosts/farworker.yaml' };

/** The `<inbox-message …>` blocks of the last call a model was shown, one per message surfaced. */
function shownMail(log: string, pid: number | null): string[] {
  const calls = scriptCalls(log).filter((c) => c.pid === pid);
  const last = calls.at(-1);
  if (!last) return [];
  return userTexts(last).flatMap((t) => t.match(/<inbox-message[\s\S]*?<\/inbox-message>/g) ?? []);
}

describe("an agent's spawn on another host", { timeout: 300_000 }, () => {
  it('opens its child there as its child: mail both ways and its completion reach each model once; wait, output and cancel act on it from here', async () => {
    const logs = mkdtempSync(join(tmpdir(), 'flotilla-xhost-logs-'));
    const childLog = join(logs, 'child-calls.jsonl');
    const pair = await hosts.open({
      localDefinitions: PARENT,
      remoteDefinitions: CHILD,
      env: { FLOTILLA_SCRIPT_LOG: childLog },
    });
    const { local, remote } = pair;
    const parentLog = join(logs, 'parent-calls.jsonl');
    const r = await local.spawnAgent(['--agent', 'parent', 'open a child on r1'], { FLOTILLA_SCRIPT_LOG: parentLog });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const parentId = r.stdout;

    // The child lives on r1, as this parent's child: one level down, in its tree.
    const child = await eventually(() => remote.records()[0], 120_000, 'the child on r1');
    expect(remote.records()).toHaveLength(1);
    expect(child).toMatchObject({ parentId, rootId: parentId, depth: 1, spawnedBy: 'agent', host: 'r1' });
    expect(local.records().map((x) => x.id)).toEqual([parentId]);
    await eventually(
      async () => (await remote.windows()).includes(child.id),
      60_000,
      "the child's window on r1's tmux server",
    );

    // The child's message and its first task's completion reach the parent's model over the bus, once each.
    const pid = () => local.record(parentId).pid;
    const completion = (m: string) => m.includes('kind="completion"') && m.includes(child.id);
    await eventually(
      () => shownMail(parentLog, pid()).some((m) => completion(m) && m.includes(`far-result-${child.id}`)),
      180_000,
      "the child's completion shown to the parent's model",
    );
    await eventually(
      () => shownMail(parentLog, pid()).some((m) => m.includes(`hello-from-${child.id}`)),
      60_000,
      "the child's message shown to the parent's model",
    );
    // And the parent's message reaches the child's model on r1, once.
    const childPid = () => remote.record(child.id).pid;
    await eventually(
      () => shownMail(childLog, childPid()).some((m) => m.includes('hello-from-parent')),
      120_000,
      "the parent's message shown to the child's model",
    );
    expect(shownMail(childLog, childPid()).filter((m) => m.includes('hello-from-parent'))).toHaveLength(1);
    // The child settles (idle), having answered one task, or two when the parent's message came after its first ended.
    const tasks = await eventually(
      () => {
        const rec = remote.record(child.id);
        return (
          rec.status === 'idle' &&
          rec.lastTask?.task === rec.task &&
          shownMail(parentLog, pid()).filter(completion).length === rec.task &&
          rec.task
        );
      },
      120_000,
      "the child idle with each of its tasks' completion shown to the parent's model",
    );
    const shown = shownMail(parentLog, pid());
    const ids = shown.filter(completion).map((m) => /id="?([0-9a-z]+)/.exec(m)?.[1]);
    expect(new Set(ids).size).toBe(tasks);
    expect(shown.filter((m) => completion(m) && m.includes(`far-result-${child.id}`))).toHaveLength(1);
    expect(shown.filter((m) => m.includes(`hello-from-${child.id}`))).toHaveLength(1);
    const files = JSON.stringify(local.mail(parentId).map((m) => [m.file, m.kind, m.from, m.summary]));
    expect(
      local.mail(parentId).filter((m) => m.kind === 'completion' && m.from === child.id),
      files,
    ).toHaveLength(tasks);
    expect(
      local.mail(parentId).filter((m) => m.from === child.id && m.kind === 'message'),
      files,
    ).toHaveLength(1);
    expect(remote.mail('human').filter((m) => m.from === child.id)).toEqual([]);

    // From this host, a person's wait and output give the child's answer, as r1 itself gives it.
    const there = await remote.flotilla(['output', child.id]);
    expect(there.exitCode).toBe(0);
    expect(there.stdout).toMatch(tasks === 1 ? /^Answer: far-result-/ : /^child noted: .*hello-from-parent/);
    const waited = await local.flotilla(['wait', child.id]);
    expect(waited.stderr).toBe('');
    expect(waited.exitCode).toBe(0);
    expect(waited.stdout).toBe(`## ${child.id}: completed\n${there.stdout}`);
    const out = await local.flotilla(['output', child.id.slice(0, -2)]);
    expect(out.exitCode).toBe(0);
    expect(out.stdout).toBe(there.stdout);
    // cancel ends it there.
    const cancelled = await local.flotilla(['cancel', child.id]);
    expect(cancelled.exitCode).toBe(0);
    expect(cancelled.stdout).toBe(`cancelled ${child.id}`);
    await eventually(() => remote.record(child.id).status === 'cancelled', 60_000, 'the child cancelled on r1');
    // A host that is not under hosts: (r1 has none) is one line saying so.
    const back = await remote.flotilla(['output', parentId]);
    expect(back.exitCode).toBe(1);
    expect(back.stderr).toBe(
      `flotilla: ${parentId} runs on host 'here', which is not under hosts: in your config — add it (hosts: {here: {ssh: user@machine}}) to act on it from here, or run the command on here`,
    );
    rmSync(logs, { recursive: true, force: true });
  });

  it('refuses with one line, exit 1, when the host cannot be reached, and leaves nothing on either side', async () => {
    const closed = await startSshd();
    const port = closed.port;
    await closed.kill();
    const pair = await hosts.open({ port, localDefinitions: PARENT, remoteDefinitions: CHILD });
    const { local, remote } = pair;
    const r = await local.spawnAgent(['--agent', 'parent', '--oneshot', '--wait', 'open a child on r1']);
    expect(r.exitCode).toBe(0);
    // What the agent's shell got: one line saying what to do, then the spawn's exit status.
    expect(r.stdout).toMatch(
      /^spawned: flotilla: host 'r1' \(root@127\.0\.0\.1\) is unreachable: [^\n]* — check that 'ssh -o BatchMode=yes root@127\.0\.0\.1 true' works without a prompt \(hosts\.r1 in config\.yaml\) exit=1 \[exit code 0\]$/,
    );
    expect(local.records()).toHaveLength(1);
    expect(remote.records()).toEqual([]);
  });
});
