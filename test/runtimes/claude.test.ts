import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claude } from '../../src/runtimes/claude.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { pinnedRuntimeBinary, vendorFleet, type VendorFleet } from './helpers.js';

/**
 * Claude Code under the Flotilla shim (§13), in real tmux, against a fake Anthropic API on
 * 127.0.0.1 replaying scripted-model YAML. What it proves is the wiring (lineage, MCP,
 * hooks, completion, permissions), not a real model's behaviour.
 */
const bin = pinnedRuntimeBinary('claude');

let fleet: VendorFleet | undefined;
afterEach(async () => {
  await fleet?.dispose();
  fleet = undefined;
});

const DONT_ASK = 'permissions:\n  permission_mode: dont_ask\n';

async function open(script: string, definitions: Record<string, string> = { cc: DONT_ASK }): Promise<VendorFleet> {
  fleet = await vendorFleet({
    runtime: claude, wire: 'anthropic', script, bin, definitions,
    env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_AUTH_TOKEN: 'fake-token-for-a-local-server' }),
  });
  return fleet;
}

// Generous deadlines: the CLI starts slowly on a busy two-core machine; nothing here times it.
describe('runtime claude (Claude Code)', { timeout: 600_000 }, () => {
  it('starts as a child at depth + 1, sends through MCP to its parent, and its final answer is exactly one completion', async () => {
    const f = await open('report.yaml');
    const id = await f.spawnChild('cc', 'cc-report', 'report to your parent');
    expect(f.record(id)).toMatchObject({ parentId: 'lead-parent', depth: 1, runtime: 'claude' });
    await eventually(() => f.mail('lead-parent').some((m) => m.kind === 'message'), 240_000, 'the MCP message in the parent inbox');
    expect(f.mail('lead-parent').filter((m) => m.kind === 'message')).toEqual([expect.objectContaining({ from: id, to: 'lead-parent', summary: 'progress' })]);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length > 0, 240_000, 'completion');
    await new Promise((r) => setTimeout(r, 1500));
    const done = completionsFrom(f, 'lead-parent', id);
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ status: 'completed' });
    expect(done[0]!.body).toContain('Final answer: reported');
    expect(f.record(id)).toMatchObject({ status: 'idle', lastTask: expect.objectContaining({ status: 'completed' }) });
    expect(f.record(id).usage.outputTokens).toBeGreaterThan(0);
  });

  it('mail sent while it works is in its next turn; the task still ends in one completion', async () => {
    const f = await open('mail-while-working.yaml');
    const id = await f.spawnChild('cc', 'cc-mail', 'work a while');
    await eventually(() => f.vendor.prompts.length >= 1, 240_000, 'the first model call');
    const sent = await f.flotilla(['send', id, 'ping-while-working-42']);
    expect(sent.exitCode).toBe(0);
    // The scripted shell command works until this file exists: the mail is in before its turn ends.
    writeFileSync(join(f.project, 'go'), '');
    await eventually(() => completionsFrom(f, 'lead-parent', id).length > 0, 240_000, 'completion');
    // This test process is the registered parent, so `flotilla send` from it is mail from the parent.
    expect(f.vendor.seen()).toMatch(/<inbox-message [^>]*from="lead-parent"[^>]*>\s*ping-while-working-42/);
    await new Promise((r) => setTimeout(r, 1500));
    const done = completionsFrom(f, 'lead-parent', id);
    expect(done).toHaveLength(1);
    expect(done[0]!.body).toContain('Got mail');
  });

  it('mail to an idle CLI wakes it (pasted notice, the hook hands the mail over as data)', async () => {
    const f = await open('idle.yaml');
    const id = await f.spawnChild('cc', 'cc-idle', 'get ready');
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, 'first completion');
    await eventually(() => f.record(id).status === 'idle', 60_000, 'idle');
    await f.flotilla(['send', id, 'wake-up-call-77']);
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 2, 240_000, 'second completion');
    expect(completionsFrom(f, 'lead-parent', id).map((m) => m.body).join('\n')).toContain('Woken by mail');
    expect(f.vendor.seen()).toMatch(/<inbox-message [^>]*>\s*wake-up-call-77/);
  });

  it('SIGKILL of the CLI while it works ends the agent crashed with exactly one completion', async () => {
    const f = await open('sleeper.yaml');
    const id = await f.spawnChild('cc', 'cc-kill', 'sleep');
    await eventually(() => f.vendor.prompts.length >= 1 && f.cliPid(id), 240_000, 'the CLI working');
    await new Promise((r) => setTimeout(r, 1000));
    process.kill(f.cliPid(id)!, 'SIGKILL');
    await eventually(() => f.record(id).status === 'crashed', 120_000, 'crashed');
    await eventually(() => completionsFrom(f, 'lead-parent', id).length > 0, 120_000, 'completion');
    await new Promise((r) => setTimeout(r, 1500));
    const done = completionsFrom(f, 'lead-parent', id);
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ status: 'crashed' });
    expect(f.record(id).exitReason).toContain('killed (SIGKILL)');
  });

  it('closing its window ends the agent cancelled with exactly one completion', async () => {
    const f = await open('sleeper.yaml');
    const id = await f.spawnChild('cc', 'cc-close', 'sleep');
    await eventually(() => f.vendor.prompts.length >= 1, 240_000, 'the CLI working');
    await f.tmux.tmux('kill-window', '-t', f.record(id).tmux!.windowId);
    await eventually(() => ['cancelled', 'crashed'].includes(f.record(id).status), 120_000, 'ended');
    await eventually(() => completionsFrom(f, 'lead-parent', id).length > 0, 120_000, 'completion');
    await new Promise((r) => setTimeout(r, 1500));
    const done = completionsFrom(f, 'lead-parent', id);
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ status: 'cancelled' });
  });

  it("a tool its definition denies is refused by Claude Code's own permission settings", async () => {
    const f = await open('denied.yaml', { cc: `${DONT_ASK}tools: [read, send_message]\n` });
    const id = await f.spawnChild('cc', 'cc-deny', 'try the shell');
    await eventually(() => completionsFrom(f, 'lead-parent', id).length > 0, 240_000, 'completion');
    expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toContain('Refused');
    expect(existsSync(join(f.project, 'denied-marker'))).toBe(false);
  });
});
