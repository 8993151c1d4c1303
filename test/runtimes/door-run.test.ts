import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listRecords } from '../../src/fleet/registry.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, scriptedDefinition } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

const fleets = vendorFleets();

/**
 * `flotilla run` from a vendor CLI's shell in the default sandbox (docs/security.md "The
 * door"): the fleet root is read-only there, so the shim's door runs it on the host as the
 * agent's child — the task on stdin goes along and the one-shot's answer is the output.
 */
describe("flotilla run from a vendor agent's shell, through the door", { timeout: 600_000 }, () => {
  it.each(RUNTIMES)('%s', async (name) => {
    const t = TARGETS[name]();
    const f = await fleets.open({
      ...t,
      script: 'door-run.yaml',
      definitions: { a: DONT_ASK },
    });
    // The one-shot runs on Flotilla's own harness with the scripted model: it answers with its shell's output.
    scriptedDefinition(f.layout, 'worker', 'worker.yaml');
    const id = await f.spawnChild('a', `${name}-runs`, 'run a one-shot', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the completion');
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('the one-shot ran');
    // The fleet root is read-only in its shell: the run below cannot have written it itself.
    expect(readFileSync(join(f.project, 'ro-code.txt'), 'utf8').trim()).toBe('1');
    const out = readFileSync(join(f.project, 'run.out'), 'utf8');
    expect({ code: readFileSync(join(f.project, 'run-code.txt'), 'utf8').trim(), out }).toEqual({
      code: '0',
      out: expect.stringContaining('Answer: result-of-rp') as unknown,
    });
    // The one-shot was the agent's child, and it was given the task from stdin.
    expect(listRecords(f.layout).find((r) => r.id === 'rp')).toMatchObject({ parentId: id, status: 'completed' });
    expect(readFileSync(f.layout.taskFile('rp'), 'utf8')).toContain('the task from stdin');
    // Its answer came back as the run's output: its completion is read, never handed to the CLI as mail too.
    await eventually(
      () => completionsFrom(f, id, 'rp').filter((m) => m.file!.startsWith('cur/')).length === 1,
      60_000,
      "the one-shot's completion read",
    );
    expect(f.vendor.seen()).not.toMatch(/<inbox-message[^>]*from="rp"/);
  });
});
