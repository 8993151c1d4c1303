import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, getRecord, updateRecord } from '../../src/fleet/registry.js';
import { runRuntimeHook } from '../../src/harness/cli-host/hook.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

/**
 * A vendor CLI's turn-start hook opens a task only for a turn someone asked for. Gemini CLI runs
 * its BeforeAgent hook again, with an empty prompt, when it sends a tool's result on by itself
 * after the limit's Escape stopped its task: that once opened a second task, which the limit
 * ended too, so the parent got two completions for one message (CI, limits.test.ts). The hook
 * runs here in this process, which stands in for the agent's shim: it is registered with this
 * process's pid, as a shim is, so the hook's ancestry walk finds it.
 */
let fleet: TempFleet | undefined;
afterEach(() => {
  fleet?.cleanup();
  fleet = undefined;
});

/** A Gemini agent idle after its first task ended at max_turns, as the limit leaves it. */
function stoppedAgent(): { fleet: TempFleet; id: string } {
  const f = tempFleet('flotilla-turn-start-');
  const id = 'gem-a1b2c3';
  createRecord(
    f.layout,
    recordInput(id, {
      runtime: 'gemini',
      status: 'idle',
      pid: process.pid,
      pidStartTime: processStartTime(process.pid),
      cwd: f.project,
    }),
  );
  updateRecord(f.layout, id, {
    task: 1,
    taskTurns: 2,
    lastTask: {
      task: 1,
      status: 'failed',
      exitReason: 'max_turns',
      finishedAt: new Date().toISOString(),
      outputPath: null,
    },
  });
  return { fleet: f, id };
}

describe('turn-start: only a turn someone asked for opens a task', () => {
  it('a turn with an empty prompt after the task ended opens no task, and is stopped before the model is asked', async () => {
    const s = stoppedAgent();
    fleet = s.fleet;
    const reply = await runRuntimeHook(s.fleet.layout, defaultConfig(), 'turn-start', JSON.stringify({ prompt: '' }));
    expect(JSON.parse(reply!.stdout)).toMatchObject({ continue: false });
    expect(JSON.parse(reply!.stdout).stopReason).toMatch(/stopped by the fleet \(max_turns\)/);
    expect(getRecord(s.fleet.layout, s.id)).toMatchObject({ task: 1, status: 'idle' });
  });

  it("a person's or parent's message after the task ended opens the next task", async () => {
    const s = stoppedAgent();
    fleet = s.fleet;
    const reply = await runRuntimeHook(
      s.fleet.layout,
      defaultConfig(),
      'turn-start',
      JSON.stringify({ prompt: 'and now the tests' }),
    );
    expect(reply).toBeNull();
    expect(getRecord(s.fleet.layout, s.id)).toMatchObject({ task: 2, status: 'working', taskTurns: 0 });
  });

  it('an empty prompt while the task still runs leaves it running', async () => {
    const s = stoppedAgent();
    fleet = s.fleet;
    updateRecord(s.fleet.layout, s.id, { task: 2, taskTurns: 1, status: 'working' });
    const reply = await runRuntimeHook(s.fleet.layout, defaultConfig(), 'turn-start', JSON.stringify({ prompt: '' }));
    expect(reply).toBeNull();
    expect(getRecord(s.fleet.layout, s.id)).toMatchObject({ task: 2, status: 'working', taskTurns: 1 });
  });
});

describe('pre-tool: a tool asked for after a limit stopped the task ends the turn', () => {
  // Refused only, Gemini sends the refusal on to the model under the same prompt id (no
  // BeforeAgent hook), and the model is asked again until the limit's Escape lands: under load
  // that was two requests after the completion (CI, limits.test.ts). `continue: false` ends
  // Gemini's turn at the refused call.
  it('Gemini gets a refusal that also stops its turn, for a task a limit ended', async () => {
    const s = stoppedAgent();
    fleet = s.fleet;
    const call = { tool_name: 'run_shell_command', tool_input: { command: 'echo still-working' } };
    const reply = await runRuntimeHook(s.fleet.layout, defaultConfig(), 'pre-tool', JSON.stringify(call));
    const out = JSON.parse(reply!.stdout);
    expect(out).toMatchObject({ decision: 'deny', continue: false });
    expect(out.stopReason).toMatch(/stopped by the fleet \(max_turns\)/);
    expect(getRecord(s.fleet.layout, s.id)).toMatchObject({ task: 1, status: 'idle' });
  });

  it('Gemini gets a refusal that also stops its turn at the answer that reached max_turns, and the task ends', async () => {
    const s = stoppedAgent();
    fleet = s.fleet;
    updateRecord(s.fleet.layout, s.id, { task: 2, taskTurns: 2, maxTurns: 2, status: 'working' });
    const call = { tool_name: 'run_shell_command', tool_input: { command: 'echo still-working' } };
    const reply = await runRuntimeHook(s.fleet.layout, defaultConfig(), 'pre-tool', JSON.stringify(call));
    expect(JSON.parse(reply!.stdout)).toMatchObject({ decision: 'deny', continue: false });
    expect(getRecord(s.fleet.layout, s.id)).toMatchObject({
      task: 2,
      status: 'idle',
      lastTask: expect.objectContaining({ task: 2, status: 'failed', exitReason: 'max_turns' }),
    });
  });
});
