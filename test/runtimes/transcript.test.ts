import { describe, expect, it } from 'vitest';
import { createRecord } from '../../src/fleet/registry.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, RUNTIMES, vendorFleets } from './vendor-suite.js';

/**
 * `flotilla transcript` of a vendor agent (docs/runtimes.md, "Resume and transcript"): its
 * turns rendered from the CLI's own session file — the prompt it was given, the command it
 * ran with that command's output, and the final answer the fake server gave — in that order,
 * as our own transcripts print them; `--json` gives the same as records; `--follow` ends with
 * the agent.
 */
const fleets = vendorFleets();

describe("flotilla transcript renders a vendor agent's turns from its CLI's session file", { timeout: 600_000 }, () => {
  it.each(RUNTIMES)('%s: the prompt, the tool call with its output, the final answer', async (name) => {
    const t = TARGETS[name]();
    const f = await fleets.open({ ...t, script: 'resume.yaml', definitions: { a: DONT_ASK } });
    const id = await f.spawnChild('a', `${name}-told`, 'first-task-marker-12', t.spawnArgs);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, "the task's completion");
    await eventually(() => f.record(id).status === 'idle', 60_000, 'idle');

    const r = await f.flotilla(['transcript', id, '--lines', '10']);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = r.stdout;
    expect(out).toContain(`━━ ${id} · a · ${f.record(id).model} · child of lead-parent`);
    expect(out).toContain(`${t.runtime.title}'s session file`);
    const prompt = out.search(/ user\n {2}first-task-marker-12\n/);
    const call = out.indexOf('$ echo tool-output-marker-81');
    // The command's output, indented under its call (Gemini frames it: `Output: tool-output-marker-81`).
    const output = call + 1 + out.slice(call + 1).search(/\n {4}[^\n]*tool-output-marker-81/);
    const answer = out.search(/ assistant\n {2}Final answer: first-answer-marker-53/);
    expect(prompt, out).toBeGreaterThan(0);
    // Claude Code may write the prompt's line after the model's first lines (seen once in a full
    // run); the transcript follows the conversation's chain, so the prompt still comes first.
    expect(call, out).toBeGreaterThan(prompt);
    expect(call, out).toBeGreaterThan(0);
    expect(output, out).toBeGreaterThan(call);
    expect(answer, out).toBeGreaterThan(output);

    const json = await f.flotilla(['transcript', id, '--json']);
    expect(json.exitCode).toBe(0);
    const records = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; message?: { role: string; content: unknown } });
    expect(records[0]).toMatchObject({ type: 'header', agent_id: id, parent_id: 'lead-parent' });
    expect(records.slice(1).every((e) => e.type === 'message')).toBe(true);
    const calls = records.flatMap((e) => (Array.isArray(e.message?.content) ? e.message.content : [])) as {
      type: string;
      toolName?: string;
    }[];
    expect(calls).toContainEqual(expect.objectContaining({ type: 'tool-call', toolName: 'shell' }));
    expect(calls).toContainEqual(expect.objectContaining({ type: 'tool-result', toolName: 'shell' }));

    // --follow prints what is there and returns once the agent has ended.
    const following = f.flotilla(['transcript', id, '--follow']);
    await new Promise((r) => setTimeout(r, 2000));
    expect((await f.flotilla(['cancel', id])).exitCode).toBe(0);
    const followed = await following;
    expect(followed.exitCode, followed.stderr).toBe(0);
    expect(followed.stdout).toContain('Final answer: first-answer-marker-53');
  });

  it('a vendor agent whose CLI wrote no session file: a clear error, exit 1', async () => {
    const t = TARGETS.codex();
    const f = await fleets.open({ ...t, script: 'resume.yaml', definitions: { a: DONT_ASK } });
    createRecord(
      f.layout,
      recordInput('codex-never', {
        name: 'a',
        cwd: f.project,
        mode: 'interactive',
        runtime: 'codex',
        model: 'codex',
        status: 'failed',
      }),
    );
    const r = await f.flotilla(['transcript', 'codex-never']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('codex-never is a Codex agent and Codex wrote no session file');
    expect(r.stdout).toBe('');
  });
});
