import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listRecords } from '../../src/fleet/registry.js';
import { eventually } from '../helpers/tmux.js';
import { TARGETS } from './targets.js';
import { DONT_ASK, vendorFleets } from './vendor-suite.js';

const fleets = vendorFleets();

/**
 * A vendor CLI in the sandbox reads its pane's terminal but cannot type into it
 * (docs/security-fleet.md "Vendor runtimes: what the sandbox covers"): bwrap's `--new-session` leaves
 * the terminal without being its controlling one, so TIOCSTI (push bytes into the terminal's
 * input, as if the person typed them — an approval's `y`) is refused, and the fresh /dev/pts
 * inside has no path to the pane's terminal. The CLI here is the pinned Claude Code behind a
 * launcher that first runs the probe, as the CLI's own code or anything it starts could.
 */
const PROBE = String.raw`perl -e '
  my $c = "x";
  print(ioctl(STDIN, 0x5412, $c) ? "sti ok\n" : "sti failed: $!\n");
  print(open(my $t, "+<", $ARGV[0]) ? "open ok\n" : "open failed: $!\n");
'`;

describe('a vendor CLI in the sandbox and its pane', { timeout: 600_000 }, () => {
  it('cannot push keystrokes into the pane (TIOCSTI) nor open its terminal by path; the same probe in a plain pane can', async () => {
    const t = TARGETS.claude();
    const f = await fleets.open({
      ...t,
      script: 'first.yaml',
      definitions: { a: DONT_ASK },
    });
    const dir = join(f.project, 'probe');
    mkdirSync(dir);
    const tty = join(dir, 'tty');
    const out = join(dir, 'out');
    // The launcher waits until the test names the pane's terminal, probes once, then runs the CLI.
    writeFileSync(
      join(dir, 'claude'),
      [
        '#!/bin/sh',
        `if [ "$1" = --version ] || [ -e '${out}' ]; then exec '${t.bin}' "$@"; fi`,
        `i=0; while [ ! -s '${tty}' ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done`,
        `${PROBE} "$(cat '${tty}')" > '${out}.part' 2>&1; mv '${out}.part' '${out}'`,
        `exec '${t.bin}' "$@"`,
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    f.env.FLOTILLA_CLAUDE_BIN = join(dir, 'claude');

    const id = await f.spawnChild('a', 'claude-probe', 'first-task-marker-31', t.spawnArgs);
    const paneId = await eventually(
      () => listRecords(f.layout).find((r) => r.id === id)?.tmux?.paneId,
      60_000,
      "the agent's pane",
    );
    const paneTty = (await f.tmux.tmux('display', '-p', '-t', paneId, '#{pane_tty}')).trim();
    expect(paneTty).toMatch(/^\/dev\/pts\/\d+$/);
    writeFileSync(tty, paneTty);
    const inside = await eventually(
      () => existsSync(out) && readFileSync(out, 'utf8'),
      120_000,
      'the probe inside the sandbox',
    );
    expect(inside).toMatch(/^sti failed: Operation not permitted$/m);
    expect(inside).toMatch(/^open failed: No such file or directory$/m);

    // The probe itself works here: in a plain pane, whose terminal is its controlling one, both succeed.
    const control = join(dir, 'control');
    await f.tmux.tmux(
      'new-window',
      '-d',
      `${PROBE} "$(tty)" > '${control}.part' 2>&1; mv '${control}.part' '${control}'; sleep 5`,
    );
    const outside = await eventually(
      () => existsSync(control) && readFileSync(control, 'utf8'),
      60_000,
      'the probe in a plain pane',
    );
    expect(outside).toBe('sti ok\nopen ok\n');
  });
});
