import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from './helpers.js';

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const CLI = '"$FLOTILLA_NODE" "$FLOTILLA_CLI"';
/** Runs `cmd` in the agent's sandboxed shell, its output in `<name>.out`, its exit code appended to codes.txt. */
const step = (name: string, cmd: string) => `${cmd} > ${name}.out 2>&1; echo "${name}:$?" >> codes.txt`;
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
});

/**
 * Inside the sandbox the fleet root is read-only and the harness is out of sight; the fleet
 * commands a command needs go through its agent's door (docs/security.md "The door"): the
 * harness runs them on the host as its own child, so they act as that agent, with its
 * limits and the refusals it gets anywhere else; and `flotilla mcp` there is that agent.
 */
describe('fleet commands from a sandboxed command, through the door', () => {
  it('claim mail, spawn children (depth, caps), cancel only its own, use the board, and flotilla mcp is the agent', async () => {
    f = spawnFleet({
      config: 'security:\n  sandbox: bubblewrap\nlimits:\n  max_children: 2\n',
      definitions: { prober: 'run-prompt.yaml', victim: 'sleeper.yaml', worker: 'worker.yaml' },
    });
    writeFileSync(join(f.project, 'mcp-req.json'), INITIALIZE + '\n');
    expect((await f.spawnAgent(['--agent', 'victim', '--id', 'vic', 'sleep'])).exitCode).toBe(0);
    await eventually(
      () => f!.records().find((x) => x.id === 'vic')?.status === 'working',
      60_000,
      'the victim to work',
    );

    const command = [
      // Says it runs, then waits for the id of a message the test puts in its inbox.
      ': > started; until [ -s go ]; do sleep 0.2; done; M=$(cat go)',
      step('claim', `${CLI} inbox pr --read "$M" --json`),
      step('kid', "spawn-agent --agent worker --id kid --wait 'work'"),
      step('sl', "spawn-agent --agent victim --id sl 'sleep'"),
      step('two', "spawn-agent --agent worker --id two 'work'"),
      step('cancel-own', `${CLI} cancel sl`),
      step('cancel-other', `${CLI} cancel vic`),
      step('task', `${CLI} task add 'write the docs' --json`),
      step('root', `${CLI} --root ${f.layout.root} spawn --agent worker --id rooted 'work'`),
      step('mcp-hint', `timeout 60 ${CLI} mcp < mcp-req.json`),
      step('mcp-nohint', `env -u FLOTILLA_AGENT_ID timeout 60 ${CLI} mcp < mcp-req.json`),
      'echo probes-done',
    ].join('\n');
    const prober = f.spawnAgent(['--wait', '--agent', 'prober', '--id', 'pr', command]);
    // Mail sent before its first model call would be in that call, and the fixture runs the last user text: the
    // mail goes once the command runs.
    await eventually(() => existsSync(join(f!.project, 'started')), 60_000, 'the prober to run its command');
    const sent = await f.flotilla(['send', 'pr', 'hello-pr']);
    expect(sent.exitCode, sent.stderr).toBe(0);
    writeFileSync(join(f.project, 'go'), sent.stdout.trim());
    const r = await prober;
    expect(r.stdout).toContain('probes-done');

    const out = (name: string) => readFileSync(join(f!.project, `${name}.out`), 'utf8');
    const codes = Object.fromEntries(
      readFileSync(join(f.project, 'codes.txt'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(':') as [string, string]),
    );
    expect(codes, JSON.stringify(Object.fromEntries(Object.keys(codes).map((k) => [k, out(k)])))).toEqual({
      claim: '0',
      kid: '0',
      sl: '0',
      two: '1',
      'cancel-own': '0',
      'cancel-other': '1',
      task: '0',
      root: '2',
      'mcp-hint': '0',
      'mcp-nohint': '0',
    });

    // The claim took the message from its own inbox, on the host.
    expect(JSON.parse(out('claim'))).toMatchObject({ id: sent.stdout.trim(), from: 'human', claimed: true });
    expect(f.mail('pr').find((m) => m.id === sent.stdout.trim())).toBeDefined();
    expect(existsSync(join(f.layout.inbox('pr'), 'cur'))).toBe(true);

    // Children of the prober, one level down, under its caps: a third live child is refused as it would be from the
    // harness.
    expect(out('kid')).toContain('result-of-kid');
    expect(f.record('kid')).toMatchObject({ parentId: 'pr', rootId: 'pr', depth: 1 });
    expect(f.record('sl')).toMatchObject({ parentId: 'pr', depth: 1 });
    expect(out('two')).toContain("spawn refused: 'pr' already has 2 live children (limits.max_children 2)");
    expect(f.records().some((x) => x.id === 'two')).toBe(false);

    // Its own child was cancelled; another root's agent was not.
    await eventually(() => f!.record('sl').status === 'cancelled', 60_000, 'sl to end cancelled');
    expect(out('cancel-other')).toContain("'vic' is not one of your agents");
    expect(f.record('vic').status).toBe('working');

    // The board took the task from the prober.
    expect(JSON.parse(out('task'))).toMatchObject({ title: 'write the docs', created_by: 'pr' });

    // --root cannot point the harness at a fleet of the command's choosing.
    expect(out('root')).toContain('--root is refused');
    expect(f.records().some((x) => x.id === 'rooted')).toBe(false);

    // flotilla mcp inside the sandbox is the agent, with its own FLOTILLA_AGENT_ID set or not.
    for (const name of ['mcp-hint', 'mcp-nohint']) {
      expect(JSON.parse(out(name).trim().split('\n').at(-1)!).result.instructions).toContain(
        'You are fleet agent pr (depth 0)',
      );
    }
  }, 300_000);
});
