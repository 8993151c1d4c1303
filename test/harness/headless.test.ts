import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listRecords } from '../../src/fleet/registry.js';
import { readTranscript } from '../../src/transcript/reader.js';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { fixture, scriptCalls } from '../helpers/scripts.js';

let fleet: TempFleet;
afterEach(() => fleet?.cleanup());

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    FLOTILLA_ROOT: fleet.layout.root,
    FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'dont_ask',
    FLOTILLA_SCRIPT_LOG: join(fleet.project, 'calls.jsonl'),
    ...extra,
  };
}

describe('flotilla run, one-shot', () => {
  it('echo task | flotilla run prints only the answer and records everything', async () => {
    fleet = tempFleet();
    const r = await flotilla(['run', '--model', `script:${fixture('harness/shell-then-answer.yaml')}`], {
      cwd: fleet.project,
      input: 'count the lines',
      env: env(),
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('There are 2 lines.');
    expect(String(r.stderr)).toMatch(/^\[flotilla:agent id=general-[a-z0-9]{6} pid=\d+ depth=0 model=scripted\]$/);

    const [rec] = listRecords(fleet.layout);
    expect(rec).toMatchObject({
      status: 'completed',
      depth: 0,
      spawnedBy: 'human',
      mode: 'headless',
      turns: 2,
      scripted: true,
    });
    expect(rec!.lastTask).toMatchObject({ status: 'completed', outputPath: fleet.layout.taskOutput(rec!.id, 1) });
    expect(readFileSync(fleet.layout.output(rec!.id), 'utf8')).toBe('There are 2 lines.');

    const t = readTranscript(fleet.layout, rec!.id);
    const kinds = t.entries.map((e) => (e.type === 'message' ? `${e.type}:${e.message.role}` : e.type));
    expect(kinds).toEqual(['message:user', 'message:assistant', 'message:tool', 'message:assistant', 'end']);

    const audit = readFileSync(fleet.layout.auditFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; tool?: string });
    expect(audit.map((a) => a.event)).toEqual(
      expect.arrayContaining(['spawn', 'agent_start', 'tool_call', 'tool_result', 'completion', 'agent_end']),
    );
    expect(audit.find((a) => a.event === 'tool_call')!.tool).toBe('shell');

    // The completion of a root goes to the human inbox.
    const human = readdirSync(join(fleet.layout.inbox('human'), 'new'));
    expect(human).toHaveLength(1);
    expect(readFileSync(join(fleet.layout.inbox('human'), 'new', human[0]!), 'utf8')).toMatch(
      /kind: completion[\s\S]*status: completed/,
    );
  });

  it('takes the task from arguments and exits 1 with the reason when the model fails', async () => {
    fleet = tempFleet();
    const r = await flotilla(['run', '--model', `script:${fixture('harness/fails.yaml')}`, 'do', 'it'], {
      cwd: fleet.project,
      env: env({ FLOTILLA_MODELS_MAX_RETRIES: '0' }),
    });
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/upstream exploded/);
    const [rec] = listRecords(fleet.layout);
    expect(rec!.status).toBe('failed');
    expect(rec!.exitReason).toMatch(/upstream exploded/);
  });

  it('an empty or whitespace instruction is a usage error (exit 2) before any model call', async () => {
    fleet = tempFleet();
    const log = join(fleet.project, 'calls.jsonl');
    for (const input of ['', '   \n\t\n']) {
      const r = await flotilla(['run', '--model', `script:${fixture('harness/shell-then-answer.yaml')}`], {
        cwd: fleet.project,
        input,
        env: env(),
      });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toBe(
        "flotilla: no instruction given — pass it as arguments, with --prompt, or on stdin (echo 'task' | flotilla run)",
      );
    }
    expect(existsSync(log)).toBe(false);
    expect(scriptCalls(log)).toEqual([]);
    expect(listRecords(fleet.layout)).toEqual([]);
  });
});
