import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listRecords } from '../../src/fleet/registry.js';
import { TESTED } from '../../src/versions.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom } from '../spawn/helpers.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

const fleets = vendorFleets();

const NOTICE = 'is not the version Flotilla was tested with';

/**
 * A spawn on a CLI at another version than the tested one says so in its pane, once, naming
 * the tested version and how to pin it (docs/runtimes.md, "Which CLI runs"); the version is
 * asked of each installed binary once, not at every spawn. The CLI here is the pinned Claude
 * Code behind a launcher that answers --version as a newer release would.
 */
describe('a spawn on an untested CLI version', { timeout: 600_000 }, () => {
  it('says so once in its pane; the version is asked once per binary; the tested CLI says nothing', async () => {
    const t = TARGETS.claude();
    const f = await fleets.open({
      ...t,
      script: 'first.yaml',
      definitions: { a: DONT_ASK },
    });
    const pane = async (id: string) => {
      const rec = listRecords(f.layout).find((r) => r.id === id)!;
      return f.tmux.capture(rec.tmux!.paneId);
    };
    // The tested CLI: no notice.
    const plain = await f.spawnChild('a', 'claude-tested', 'first-task-marker-31', t.spawnArgs);
    await eventually(
      () => completionsFrom(f, 'lead-parent', plain).length === 1,
      240_000,
      "the tested CLI's completion",
    );
    expect(await pane(plain)).not.toContain(NOTICE);

    const bin = join(f.project, 'newer-cli');
    mkdirSync(bin);
    const asked = join(bin, 'asked.log');
    writeFileSync(
      join(bin, 'claude'),
      `#!/bin/sh\nif [ "$1" = --version ]; then echo asked >> '${asked}'; echo '2.1.300 (Claude Code)'; exit 0; fi\nexec '${t.bin}' "$@"\n`,
      { mode: 0o755 },
    );
    f.env.FLOTILLA_CLAUDE_BIN = join(bin, 'claude');
    const ids = [];
    for (const n of [1, 2]) {
      const id = await f.spawnChild('a', `claude-newer-${n}`, 'first-task-marker-31', t.spawnArgs);
      ids.push(id);
      await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, `spawn ${n}'s completion`);
    }
    for (const id of ids) {
      const screen = await pane(id);
      expect(screen.split(NOTICE).length - 1, screen).toBe(1);
      expect(screen.replace(/\s+/g, ' ')).toContain(
        `Claude Code 2.1.300 (Claude Code) ${NOTICE} (${TESTED.claude}): a prompt it added may hold this agent — pin the tested one: npm install -g @anthropic-ai/claude-code@${TESTED.claude}`,
      );
    }
    // Both spawns ran the newer CLI, and it was asked its version once.
    expect(existsSync(asked) ? readFileSync(asked, 'utf8') : '').toBe('asked\n');
  });
});
