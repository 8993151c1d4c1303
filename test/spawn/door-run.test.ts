import { readFileSync } from 'node:fs';
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

/**
 * `flotilla run` from a sandboxed command (docs/security.md "The door"): the fleet root is
 * read-only there, so the agent's harness runs it on the host as its own child — a
 * spawn-and-wait of a child of the agent (its depth, caps and budget), the task on stdin or
 * in the arguments, the answer on stdout.
 */
describe('flotilla run from a sandboxed command, through the door', () => {
  it('runs a one-shot child of the agent (stdin or arguments), under its caps; --spawned is refused', async () => {
    f = spawnFleet({
      config: 'security:\n  sandbox: bubblewrap\nlimits:\n  max_children: 1\n',
      definitions: { prober: 'run-prompt.yaml', worker: 'worker.yaml', sleeper: 'sleeper.yaml' },
    });
    const command = [
      // The fleet root really is read-only here: the run below cannot have written it itself.
      step('ro', `touch ${f.layout.root}/probe`),
      step('piped', `echo 'the task from stdin' | ${CLI} run --agent worker --id rp`),
      step('args', `${CLI} run --agent worker --id ra 'the task in arguments'`),
      step('spawned', `${CLI} run --spawned pr`),
      step('sl', "spawn-agent --agent sleeper --id sl 'sleep'"),
      step('over', `${CLI} run --agent worker --id over 'one too many'`),
      'echo probes-done',
    ].join('\n');
    const r = await f.spawnAgent(['--wait', '--agent', 'prober', '--id', 'pr', command]);
    expect(r.stdout).toContain('probes-done');

    const out = (name: string) => readFileSync(join(f!.project, `${name}.out`), 'utf8');
    const codes = Object.fromEntries(
      readFileSync(join(f.project, 'codes.txt'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(':') as [string, string]),
    );
    expect(codes, JSON.stringify(Object.fromEntries(Object.keys(codes).map((k) => [k, out(k)])))).toEqual({
      ro: '1',
      piped: '0',
      args: '0',
      spawned: '2',
      sl: '0',
      over: '1',
    });

    // Each run's answer is the caller's output, and the agent that gave it is the prober's child.
    expect(out('piped')).toContain('Answer: result-of-rp');
    expect(out('args')).toContain('Answer: result-of-ra');
    for (const id of ['rp', 'ra'])
      expect(f.record(id)).toMatchObject({ parentId: 'pr', rootId: 'pr', depth: 1, status: 'completed' });
    // The task reached the child's model as given.
    expect(readFileSync(f.layout.taskFile('rp'), 'utf8')).toContain('the task from stdin');

    // The internal harness entry is not the command's to use.
    expect(out('spawned')).toContain('--spawned is internal');
    // With one live child the prober is at its cap: a run is refused as a spawn would be.
    expect(out('over')).toContain("'pr' already has 1 live children (limits.max_children 1)");
    expect(f.records().some((x) => x.id === 'over')).toBe(false);
    await eventually(() => f!.record('sl').status === 'working', 60_000, 'the sleeper to work');
  }, 300_000);

  it("works in the default sandbox with the flotilla on the agent's PATH, as a person's agent calls it", async () => {
    f = spawnFleet({ definitions: { prober: 'run-prompt.yaml', worker: 'worker.yaml' } });
    const command = [
      step('ro', `touch ${f.layout.root}/probe`),
      step('piped', "echo 'the task from stdin' | flotilla run --agent worker --id rp"),
      'echo probes-done',
    ].join('\n');
    const r = await f.spawnAgent(['--wait', '--agent', 'prober', '--id', 'pr', command]);
    expect(r.stdout).toContain('probes-done');
    const out = readFileSync(join(f.project, 'piped.out'), 'utf8');
    expect({ codes: readFileSync(join(f.project, 'codes.txt'), 'utf8'), out }).toEqual({
      codes: 'ro:1\npiped:0\n',
      out: expect.stringContaining('Answer: result-of-rp') as unknown,
    });
    expect(f.record('rp')).toMatchObject({ parentId: 'pr', status: 'completed' });
    expect(readFileSync(f.layout.taskFile('rp'), 'utf8')).toContain('the task from stdin');
  }, 300_000);
});
