import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptCalls, toolOutput, userTexts } from '../helpers/scripts.js';
import { eventually } from '../helpers/tmux.js';
import { hostsOnBus } from './helpers.js';

/**
 * The model's own fleet tools on a child another host runs (docs/design.md §17.7): a parent
 * here opens `far1` on r1 (a real sshd, its own fleet root and tmux server, one nats-server
 * between them), then calls wait_for_agents, list_agents and cancel_agent on it.
 */
const hosts = hostsOnBus();

describe("a model's fleet tools on its child on another host", { timeout: 300_000 }, () => {
  it('wait_for_agents returns its answer once, list_agents shows it, cancel_agent ends it there', async () => {
    const logs = mkdtempSync(join(tmpdir(), 'flotilla-xtools-logs-'));
    const pair = await hosts.open({
      localDefinitions: { parent: '../hosts/parent-tools.yaml' },
      remoteDefinitions: { farworker: '../hosts/farworker.yaml' },
    });
    const { local, remote } = pair;
    const log = join(logs, 'parent-calls.jsonl');
    const r = await local.spawnAgent(['--agent', 'parent', 'work with a child on r1'], { FLOTILLA_SCRIPT_LOG: log });
    expect(r.exitCode, r.stderr).toBe(0);
    const parentId = r.stdout;

    const last = await eventually(
      () => scriptCalls(log).find((c) => toolOutput(c, 'cancel_agent') !== undefined),
      240_000,
      'the parent model to see cancel_agent return',
    );
    const waited = toolOutput(last, 'wait_for_agents')!;
    expect(waited).toMatch(/## far1: completed\\nAnswer: far-result-far1/);
    const listed = toolOutput(last, 'list_agents')!;
    expect(listed).toMatch(/far1/);
    expect(toolOutput(last, 'cancel_agent')).toBe('"Cancelled far1."');
    await eventually(() => remote.record('far1').status === 'cancelled', 60_000, 'far1 cancelled on r1');
    expect(remote.record('far1')).toMatchObject({ parentId, depth: 1 });

    // The answer reached the model once: in wait's result, never again as its completion mail,
    // although that mail came to the parent's inbox over the bus.
    await eventually(
      () => local.mail(parentId).some((m) => m.kind === 'completion' && m.from === 'far1'),
      60_000,
      "far1's completion in the parent's inbox",
    );
    const parent = () => local.record(parentId);
    await eventually(() => parent().status === 'idle', 60_000, 'the parent idle');
    const calls = scriptCalls(log).filter((c) => c.pid === parent().pid);
    const shown =
      calls
        .flatMap((c) => userTexts(c))
        .join('\n')
        .match(/<inbox-message[\s\S]*?<\/inbox-message>/g) ?? [];
    expect(shown.filter((m) => m.includes('kind="completion"') && m.includes('far1'))).toEqual([]);
    expect(shown.filter((m) => m.includes('hello-from-far1')).length).toBeGreaterThan(0);
    rmSync(logs, { recursive: true, force: true });
  });
});
