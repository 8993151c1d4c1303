import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { fixture, spawnFleet, type SpawnFleet } from './helpers.js';

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const W = `--oneshot --agent worker`;
const UNSET = 'env -u FLOTILLA_AGENT_ID -u FLOTILLA_PARENT_ID -u FLOTILLA_DEPTH';
const CLI = '"$FLOTILLA_NODE" "$FLOTILLA_CLI"';

/** Each way a process can leave its parent behind, each starting one child agent. */
const TRICKS: Record<string, string> = {
  't-setsid': `setsid -f ${UNSET} spawn-agent ${W} --id t-setsid hi`,
  't-subshell': `( ${UNSET} spawn-agent ${W} --id t-subshell hi & )`,
  't-nohup': `nohup ${UNSET} spawn-agent ${W} --id t-nohup hi > /dev/null 2>&1 &`,
  't-envi': `env -i PATH="$PATH" FLOTILLA_TMUX_SOCKET="$FLOTILLA_TMUX_SOCKET" setsid -f spawn-agent ${W} --id t-envi hi`,
  't-disown': `bash -c '${UNSET} spawn-agent ${W} --id t-disown hi > /dev/null 2>&1 & disown'`,
  't-double': `( sh -c '${UNSET} spawn-agent ${W} --id t-double hi > /dev/null 2>&1 &' & )`,
  't-run': `setsid -f ${UNSET} ${CLI} run --id t-run --model script:${fixture('worker.yaml')} hi > run.out 2>&1`,
};

describe('lineage survives detaching', () => {
  it("every detaching trick from an agent's shell makes that agent's child; send is from it; approve and a forged send are refused", async () => {
    f = spawnFleet({
      // Lineage by ancestry without a sandbox: under bubblewrap a command with its environment
      // wiped cannot reach the fleet at all (test/spawn/sandbox-e2e.test.ts, the escape suite).
      config: 'limits:\n  max_children: 10\n  max_running: 12\n  max_spawns_per_tree: 20\nsecurity:\n  sandbox: none\n',
      definitions: { prober: 'run-prompt.yaml', worker: 'worker.yaml' },
    });
    const command = [
      ...Object.values(TRICKS),
      `setsid -f ${UNSET} ${CLI} send human from-a-detached-process`,
      `setsid -f env FLOTILLA_AGENT_ID=worker-000000 ${CLI} send human forged > forged.out 2>&1`,
      `setsid -f ${UNSET} ${CLI} approve 0000 > approve.out 2>&1`,
      'echo tricks-started',
    ].join('\n');
    const r = await f.spawnAgent(['--wait', '--agent', 'prober', '--id', 'pr', command]);
    expect(r.stdout).toContain('tricks-started');
    const ids = Object.keys(TRICKS);
    const kids = await eventually(
      () => {
        const recs = f!.records().filter((x) => ids.includes(x.id));
        return recs.length === ids.length && recs.every((x) => x.status !== 'spawning') && recs;
      },
      120_000,
      'one child per trick',
    );
    for (const kid of kids) expect([kid.id, kid.parentId, kid.depth, kid.rootId]).toEqual([kid.id, 'pr', 1, 'pr']);
    expect(
      f
        .records()
        .filter((x) => x.parentId === null)
        .map((x) => x.id),
    ).toEqual(['pr']);

    // Whole lines only: the shell creates the file before the command writes to it.
    const read = (name: string) =>
      eventually(
        () => {
          try {
            const t = readFileSync(join(f!.project, name), 'utf8');
            return t.endsWith('\n') && t;
          } catch {
            return false;
          }
        },
        60_000,
        name,
      );
    expect(await read('approve.out')).toMatch(
      /approve refused: approvals must come from a person, and this command runs inside agent 'pr'/,
    );
    expect(await read('forged.out')).toMatch(
      /FLOTILLA_AGENT_ID names 'worker-000000', but this process belongs to agent 'pr'/,
    );
    const human = await eventually(
      () => f!.mail('human').find((m) => (m.body ?? '').includes('from-a-detached-process')) ?? false,
      60_000,
      'the detached send',
    );
    expect(human.from).toBe('pr');
    expect(f.mail('human').some((m) => (m.body ?? '').includes('forged'))).toBe(false);
  }, 240_000);

  it('an agent that always spawns with setsid -f env -u … stops at max_depth, with no window beyond it', async () => {
    f = spawnFleet({ config: 'limits:\n  max_depth: 2\n', definitions: { dchain: 'detached-chain.yaml' } });
    const r = await f.spawnAgent(['--agent', 'dchain', '--id', 'd0', 'start']);
    expect(r.exitCode).toBe(0);
    const refused = await eventually(
      () => {
        try {
          // The whole bracketed line, not a part of it still being written.
          const text = readFileSync(join(f!.project, 'spawned.2.txt'), 'utf8');
          return /\[flotilla:depth-limit [^\]\n]*\]/.test(text) && text;
        } catch {
          return false;
        }
      },
      120_000,
      'the depth-2 agent to be refused',
    );
    expect(refused).toMatch(/\[flotilla:depth-limit depth=3 max=2\]/);
    const recs = f.records();
    expect(recs.map((x) => x.depth).sort()).toEqual([0, 1, 2]);
    for (const x of recs.filter((y) => y.depth > 0))
      expect(recs.find((p) => p.id === x.parentId)?.depth).toBe(x.depth - 1);
    expect((await f.windows()).length).toBe(3);
  }, 240_000);
});
