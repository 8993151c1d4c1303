import { readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAudit } from '../../src/audit/read.js';
import { takeLeases } from '../../src/leases/leases.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

/**
 * File leases in the vendor CLIs (docs/design.md §16): one of our agents (the registered
 * parent) holds a lease on shared.txt; a Claude, a Gemini and a Codex agent, started by
 * spawn-agent exactly as a person's spawn starts them, are each told by their model to change
 * it with their own file tool (Claude's Write, Gemini's write_file, Codex's apply_patch). Their
 * own pre-tool hook refuses the call, naming the holder; the model sees the refusal and the
 * file is unchanged. Codex runs its default model, as a spawn without --model does: a model of
 * its own catalogue, which reaches apply_patch only from its JavaScript `exec` tool ("code
 * mode", docs/runtimes.md "Codex's file tool"); the fake server answers in that form.
 */

const fleets = vendorFleets(() => delete process.env.LW_PATH);

describe(
  "a vendor CLI's edit of a file another agent leased is refused by its own pre-tool hook",
  { timeout: 600_000 },
  () => {
    it.each([
      ['claude', 'lease-write.yaml', 'Write'],
      ['gemini', 'lease-write.yaml', 'write_file'],
      ['codex', 'lease-patch.yaml', 'apply_patch'],
    ] as const)('%s (%s, its %s)', async (name, script, _tool) => {
      // Codex with no --model: its default model, whose only way to apply_patch is code mode.
      const t = name === 'codex' ? { ...TARGETS.codex(), spawnArgs: [] } : TARGETS[name]();
      const f = await fleets.open({ ...t, script, definitions: { a: DONT_ASK } });
      execFileSync('git', ['init', '-q'], { cwd: f.project });
      const file = join(f.project, 'shared.txt');
      writeFileSync(file, 'holder text\n');
      process.env.LW_PATH = file;
      const held = await takeLeases(f.layout, {
        targets: [file],
        holder: 'lead-parent',
        why: 'rewriting it',
        ttlMs: null,
        task: 1,
      });
      expect(held.ok).toBe(true);

      const id = await f.spawnChild('a', `${name}-lease`, 'change the file', t.spawnArgs);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the completion');
      // The model saw the refusal: the holder, since when, why, and what to do.
      expect(f.vendor.seen()).toMatch(
        /refused: shared\.txt is leased to agent lead-parent since \S+ \(\d+ s ago\) for \\?"rewriting it\\?"/,
      );
      expect(f.vendor.seen()).toContain('Message lead-parent to ask for it');
      expect(completionsFrom(f, 'lead-parent', id)[0]!.body).toMatch(/Final answer: .*leased to agent lead-parent/);
      expect(readFileSync(file, 'utf8')).toBe('holder text\n');
      if (name === 'codex') expect(f.vendor.tools[0]).toContain('exec');
      expect(readAudit(f.layout, { event: 'lease_refused' }).lines).toContainEqual(
        expect.objectContaining({ agent: id, holder: 'lead-parent', path: 'shared.txt', via: name }),
      );
    });

    it('codex: with no other holder, its apply_patch takes the lease for its task and changes the file', async () => {
      const t = { ...TARGETS.codex(), spawnArgs: [] };
      const f = await fleets.open({
        ...t,
        script: 'lease-patch.yaml',
        definitions: { a: DONT_ASK },
      });
      execFileSync('git', ['init', '-q'], { cwd: f.project });
      const file = join(f.project, 'shared.txt');
      writeFileSync(file, 'holder text\n');

      const id = await f.spawnChild('a', 'codex-lease-free', 'change the file', t.spawnArgs);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 480_000, 'the completion');
      expect(readFileSync(file, 'utf8')).toBe('vendor text\n');
      expect(readAudit(f.layout, { event: 'lease_taken' }).lines).toContainEqual(
        expect.objectContaining({ agent: id, path: 'shared.txt', via: 'codex' }),
      );
      // Taken until its task ends: the completed task released it.
      await eventually(
        () =>
          readAudit(f.layout, { event: 'lease_released' }).lines.some((l) => l.agent === id && l.path === 'shared.txt'),
        60_000,
        'the release',
      );
      expect(f.vendor.seen()).not.toContain('refused');
    });
  },
);
