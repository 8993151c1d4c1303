import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { flotilla } from '../helpers/cli.js';
import { agentsExited, tempFleet, type TempFleet } from '../helpers/fleet.js';
import { fixture, scriptCalls } from '../helpers/scripts.js';

/**
 * Every tool call of a real harness goes through the one wrapper — the model reads a
 * bad call explained field by field, and output cut head+tail to `tools.max_output_bytes`.
 */

let fleet: TempFleet;
afterEach(async () => {
  if (fleet) await agentsExited(fleet.layout);
  fleet?.cleanup();
});

describe('the one tool wrapper in a real harness', () => {
  it('the model reads an invalid call explained, then output cut to tools.max_output_bytes with both ends kept', async () => {
    fleet = tempFleet();
    writeFileSync(fleet.layout.configFile, 'tools:\n  max_output_bytes: 2000\n');
    const log = join(fleet.project, 'calls.jsonl');
    const r = await flotilla(['run', '--model', `script:${fixture('harness/tool-output.yaml')}`, 'go'], {
      cwd: fleet.project,
      env: {
        FLOTILLA_ROOT: fleet.layout.root,
        FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'dont_ask',
        FLOTILLA_SCRIPT_LOG: log,
      },
    });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    // The second model call carries the answer to the bad read.
    const calls = scriptCalls(log).map((c) => JSON.stringify(c));
    expect(calls[1]).toContain('Invalid input for read:');
    expect(calls[1]).toContain("Fix the fields above and call 'read' again.");
    // The last answer quotes what the model read from the shell: both ends, the middle cut.
    const stdout = String(r.stdout);
    expect(stdout.startsWith('Model read: FIRST\n1\n2\n')).toBe(true);
    expect(stdout).toContain('200000\nLAST\n[exit code 0]');
    expect(stdout).toMatch(/cut from the middle/);
    expect(stdout).not.toContain('\n100000\n');
    expect(Buffer.byteLength(stdout)).toBeLessThan(3000);
  }, 180_000);
});
