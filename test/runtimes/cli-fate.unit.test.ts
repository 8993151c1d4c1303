import { describe, expect, it } from 'vitest';
import { fateOfExit } from '../../src/harness/cli-host/cli-fate.js';
import { agentEnding } from '../../src/harness/cli-host/ending.js';
import { claude } from '../../src/runtimes/claude.js';

/** How a vendor agent ends once its CLI exited (src/harness/cli-host/cli-fate.ts). */
describe("a vendor CLI's fate", () => {
  it('a window closed: the CLI dies of SIGHUP before the shim hears its own, and the agent still ends cancelled', async () => {
    const ending = agentEnding();
    // The shim's SIGHUP handler (ending.ts takeSignals) runs a moment after the CLI's exit was seen.
    setTimeout(() => ending.stop('window closed'), 50);
    expect(await fateOfExit(ending, claude, null, 'SIGHUP', false)).toEqual({
      status: 'cancelled',
      reason: 'window closed',
    });
  });

  it('the same in the sandbox, where bwrap reports the CLI killed by SIGHUP as 129', async () => {
    const ending = agentEnding();
    setTimeout(() => ending.stop('window closed'), 50);
    expect(await fateOfExit(ending, claude, 129, null, true)).toMatchObject({ status: 'cancelled' });
  });

  it('a SIGHUP nobody else explains is a crash; other signals and exits are judged at once', async () => {
    expect(await fateOfExit(agentEnding(), claude, null, 'SIGHUP', false, 50)).toEqual({
      status: 'crashed',
      reason: 'Claude Code killed (SIGHUP)',
    });
    expect(await fateOfExit(agentEnding(), claude, null, 'SIGKILL', false)).toEqual({
      status: 'crashed',
      reason: 'Claude Code killed (SIGKILL)',
    });
    expect(await fateOfExit(agentEnding(), claude, 0, null, true)).toMatchObject({ status: 'cancelled' });
    expect(await fateOfExit(agentEnding(), claude, 2, null, true)).toEqual({
      status: 'failed',
      reason: 'Claude Code exited with status 2',
    });
  });
});
