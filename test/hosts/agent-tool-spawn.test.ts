import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptCalls, toolOutput, userTexts, type LoggedCall } from '../helpers/scripts.js';
import { trustProject } from '../helpers/trust.js';
import { eventually } from '../helpers/tmux.js';
import { fixture } from '../spawn/helpers.js';
import { hostsOnBus, twoHosts, type TwoHosts } from './helpers.js';

/**
 * A definition's `host:` followed by the model's own spawn_agent tool (docs/design.md §17.5):
 * the parent's scripted model here names `farworker`, whose definition here says `host: r1`;
 * the child opens on r1 (a real sshd, its own fleet root and tmux server, one nats-server
 * between them) as the parent's child, and the parent's tools act on it from here.
 */
const hosts = hostsOnBus();

/** This host's `farworker`: the definition the tool names, which opens on r1. */
function farDefinition(pair: TwoHosts): void {
  const { local } = pair;
  writeFileSync(
    join(local.layout.agentsDir, 'farworker.md'),
    `---\nname: farworker\ndescription: works on r1\nhost: r1\nmodel: script:${fixture('../hosts/farworker.yaml')}\n---\nYou work far away.\n`,
  );
  // A definition's host: is the person's word only in a trusted folder (docs/security-trust.md "Hosts").
  trustProject(local.project, local.env);
}

/** What a tool returned to the model, in the last call that shows it. */
function lastToolOutput(calls: LoggedCall[], tool: string): string | undefined {
  return [...calls]
    .reverse()
    .map((call) => toolOutput(call, tool))
    .find((output) => output !== undefined);
}

/** The `<inbox-message …>` blocks the last call of process `pid` was shown (the whole conversation). */
function shownMail(log: string, pid: number | null): string[] {
  const last = scriptCalls(log)
    .filter((c) => c.pid === pid)
    .at(-1);
  return last ? userTexts(last).flatMap((t) => t.match(/<inbox-message[\s\S]*?<\/inbox-message>/g) ?? []) : [];
}

describe("the model's spawn_agent for a definition on another host", { timeout: 300_000 }, () => {
  it('opens the child there as its child; its completion is shown once; send_message and cancel_agent reach it', async () => {
    const logs = mkdtempSync(join(tmpdir(), 'flotilla-xtool-spawn-'));
    const childLog = join(logs, 'child-calls.jsonl');
    const parentLog = join(logs, 'parent-calls.jsonl');
    const pair = await hosts.open({
      localDefinitions: { parent: '../hosts/parent-tool-spawn.yaml' },
      remoteDefinitions: { farworker: '../hosts/farworker.yaml' },
      env: { FLOTILLA_SCRIPT_LOG: childLog },
    });
    farDefinition(pair);
    const { local, remote } = pair;
    const r = await local.spawnAgent(['--agent', 'parent', 'work with a child'], { FLOTILLA_SCRIPT_LOG: parentLog });
    expect(r.exitCode, r.stderr).toBe(0);
    const parentId = r.stdout;

    // The tool returned the id r1 gave, and the child is the parent's, on r1 only.
    await eventually(
      () => lastToolOutput(scriptCalls(parentLog), 'spawn_agent'),
      120_000,
      'the spawn_agent result shown to the model',
    );
    expect(lastToolOutput(scriptCalls(parentLog), 'spawn_agent')).toBe(
      JSON.stringify(
        'Started far1. Its result will arrive as a completion message; or call wait_for_agents with ["far1"].',
      ),
    );
    expect(remote.record('far1')).toMatchObject({
      name: 'farworker',
      parentId,
      rootId: parentId,
      depth: 1,
      spawnedBy: 'agent',
      host: 'r1',
    });
    expect(local.records().map((x) => x.id)).toEqual([parentId]);

    // Its answer reaches the parent's model once; the parent writes to it, and its model sees that once.
    const pid = () => local.record(parentId).pid;
    const completion = (m: string) => m.includes('kind="completion"') && m.includes('far1');
    await eventually(
      () => shownMail(parentLog, pid()).some((m) => completion(m) && m.includes('far-result-far1')),
      180_000,
      "far1's completion shown to the parent's model",
    );
    const childPid = () => remote.record('far1').pid;
    await eventually(
      () => shownMail(childLog, childPid()).some((m) => m.includes('hello-from-parent')),
      120_000,
      "the parent's message shown to far1's model",
    );
    expect(shownMail(childLog, childPid()).filter((m) => m.includes('hello-from-parent'))).toHaveLength(1);

    // Its second answer shown, the parent cancels it: it ends on r1.
    await eventually(
      () => lastToolOutput(scriptCalls(parentLog), 'cancel_agent'),
      180_000,
      'the cancel_agent result shown to the model',
    );
    expect(lastToolOutput(scriptCalls(parentLog), 'cancel_agent')).toBe(JSON.stringify('Cancelled far1.'));
    await eventually(() => remote.record('far1').status === 'cancelled', 60_000, 'far1 cancelled on r1');
    await eventually(() => local.record(parentId).status === 'idle', 60_000, 'the parent idle');

    // One completion per task it answered, each shown once: never twice across the bus.
    const shown = shownMail(parentLog, pid());
    expect(shown.filter((m) => completion(m) && m.includes('far-result-far1'))).toHaveLength(1);
    expect(shown.filter((m) => completion(m) && m.includes('child noted'))).toHaveLength(1);
    expect(shown.filter((m) => m.includes('hello-from-far1'))).toHaveLength(1);
    rmSync(logs, { recursive: true, force: true });
  });

  it('is refused with one line saying to set fleet.bus when the fleet is on maildir, and nothing opens on r1', async () => {
    const pair = await twoHosts({
      localDefinitions: { parent: '../hosts/tool-spawn-refused.yaml' },
      remoteDefinitions: { farworker: '../hosts/farworker.yaml' },
    });
    try {
      farDefinition(pair);
      const r = await pair.local.spawnAgent(['--agent', 'parent', '--oneshot', '--wait', 'go']);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toMatch(
        /^got: .*spawn refused: parent-[a-z0-9]{6} is an agent, and its child on host 'r1' could reach it only over the fleet's bus, which is maildir here — set fleet\.bus: nats:\/\/… and the same fleet\.name on both hosts \(docs\/scale-out\.md\), or spawn here \[flotilla:host-refused agent=parent-[a-z0-9]{6} host=r1\]/,
      );
      expect(pair.remote.records()).toEqual([]);
      expect(pair.local.records()).toHaveLength(1);
    } finally {
      await pair.close();
    }
  });
});
