import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtimes/types.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import type { Wire } from './fake-vendor.js';
import type { VendorFleet } from './helpers.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

/**
 * One vendor CLI under the Flotilla shim (§13), in real tmux, against a fake vendor API on
 * 127.0.0.1 replaying scripted-model YAML (test/fixtures/runtimes). The same cases for every
 * runtime: what they prove is the wiring (lineage, MCP, hooks, completion, permissions), not a
 * real model's behaviour. Generous deadlines: a CLI starts slowly on a busy two-core machine,
 * and nothing here times it.
 */
export interface SuiteOptions {
  runtime: Runtime;
  wire: Wire;
  bin: string;
  /** The spawner's environment that points the CLI at the fake server. */
  env(url: string): Record<string, string>;
  /** What the CLI writes in the denied tool's result (the permission settings' refusal). */
  refusal?: RegExp;
  /** Extra spawn-agent arguments (a model the fake server can speak for). */
  spawnArgs?: string[];
}

export function runtimeSuite(o: SuiteOptions): void {
  const name = o.runtime.name;
  const fleets = vendorFleets();
  const open = (script: string, definitions: Record<string, string> = { a: DONT_ASK }): Promise<VendorFleet> =>
    fleets.open({ runtime: o.runtime, wire: o.wire, script, bin: o.bin, definitions, env: o.env });
  /** Exactly one completion from `id`, still one a moment after the first arrived. */
  async function oneCompletion(f: VendorFleet, id: string) {
    await eventually(() => completionsFrom(f, 'lead-parent', id).length > 0, 240_000, 'completion');
    await new Promise((r) => setTimeout(r, 1500));
    const done = completionsFrom(f, 'lead-parent', id);
    expect(done).toHaveLength(1);
    return done[0]!;
  }

  describe(`runtime ${name} (${o.runtime.title})`, { timeout: 600_000 }, () => {
    it('starts as a child at depth + 1, sends through MCP to its parent, and its final answer is exactly one completion', async () => {
      const f = await open('report.yaml');
      const id = await f.spawnChild('a', `${name}-report`, 'report to your parent', o.spawnArgs);
      expect(f.record(id)).toMatchObject({ parentId: 'lead-parent', depth: 1, runtime: name });
      await eventually(
        () => f.mail('lead-parent').some((m) => m.kind === 'message'),
        Number(process.env.RUNTIME_TEST_WAIT_MS ?? 240_000),
        'the MCP message in the parent inbox',
      );
      expect(f.mail('lead-parent').filter((m) => m.kind === 'message')).toEqual([
        expect.objectContaining({ from: id, to: 'lead-parent', summary: 'progress' }),
      ]);
      const done = await oneCompletion(f, id);
      expect(done).toMatchObject({ status: 'completed' });
      expect(done.body).toContain('Final answer: reported');
      await eventually(() => f.record(id).status === 'idle', 60_000, 'idle');
      expect(f.record(id)).toMatchObject({ lastTask: expect.objectContaining({ status: 'completed' }) });
      expect(f.record(id).usage.outputTokens).toBeGreaterThan(0);
    });

    it('mail sent while it works is in its next turn; the task still ends in one completion', async () => {
      const f = await open('mail-while-working.yaml');
      const id = await f.spawnChild('a', `${name}-mail`, 'work a while', o.spawnArgs);
      await eventually(() => f.vendor.prompts.length >= 1, 240_000, 'the first model call');
      const sent = await f.flotilla(['send', id, 'ping-while-working-42']);
      expect(sent.exitCode).toBe(0);
      // The scripted shell command works until this file exists: the mail is in before its turn ends.
      writeFileSync(join(f.project, 'go'), '');
      const done = await oneCompletion(f, id);
      // This test process is the registered parent, so `flotilla send` from it is mail from the parent.
      expect(f.vendor.seen()).toMatch(/<inbox-message [^>]*from="lead-parent"[^>]*>\s*ping-while-working-42/);
      expect(done.body).toContain('Got mail');
    });

    it('mail to an idle CLI wakes it (pasted notice, the hook hands the mail over as data)', async () => {
      const f = await open('idle.yaml');
      const id = await f.spawnChild('a', `${name}-idle`, 'get ready', o.spawnArgs);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, 'first completion');
      await eventually(() => f.record(id).status === 'idle', 60_000, 'idle');
      await f.flotilla(['send', id, 'wake-up-call-77']);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 2, 240_000, 'second completion');
      expect(
        completionsFrom(f, 'lead-parent', id)
          .map((m) => m.body)
          .join('\n'),
      ).toContain('Woken by mail');
      expect(f.vendor.seen()).toMatch(/<inbox-message [^>]*>\s*wake-up-call-77/);
    });

    it('SIGKILL of the CLI while it works ends the agent crashed with exactly one completion', async () => {
      const f = await open('sleeper.yaml');
      const id = await f.spawnChild('a', `${name}-kill`, 'sleep', o.spawnArgs);
      await eventually(() => f.vendor.prompts.length >= 1 && f.cliPid(id), 240_000, 'the CLI working');
      await new Promise((r) => setTimeout(r, 1000));
      process.kill(f.cliPid(id)!, 'SIGKILL');
      await eventually(
        () => f.record(id).status === 'crashed',
        120_000,
        `crashed (it is ${f.record(id).status}: ${f.record(id).exitReason})`,
      );
      const done = await oneCompletion(f, id);
      expect(done).toMatchObject({ status: 'crashed' });
      expect(f.record(id).exitReason).toContain('killed (SIGKILL)');
    });

    it('closing its window ends the agent cancelled with exactly one completion', async () => {
      const f = await open('sleeper.yaml');
      const id = await f.spawnChild('a', `${name}-close`, 'sleep', o.spawnArgs);
      await eventually(() => f.vendor.prompts.length >= 1, 240_000, 'the CLI working');
      await f.tmux.tmux('kill-window', '-t', f.record(id).tmux!.windowId);
      await eventually(() => ['cancelled', 'crashed'].includes(f.record(id).status), 120_000, 'ended');
      const done = await oneCompletion(f, id);
      expect(done).toMatchObject({ status: 'cancelled' });
    });

    it(`a tool its definition denies is refused by ${o.runtime.title}'s own permission settings`, async () => {
      const f = await open('denied.yaml', { a: `${DONT_ASK}tools: [read, send_message]\n` });
      const id = await f.spawnChild('a', `${name}-deny`, 'try the shell', o.spawnArgs);
      const done = await oneCompletion(f, id);
      expect(done.body).toContain('Refused');
      if (o.refusal) expect(done.body).toMatch(o.refusal);
      expect(existsSync(join(f.project, 'denied-marker'))).toBe(false);
    });
  });
}
