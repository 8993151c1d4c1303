import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { eventually } from '../helpers/tmux.js';
import { fixture, spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/**
 * Definitions and config are live (docs/architecture.md, "Live definitions and config"): a
 * pane's chat commands and the dashboard see a change within a second, without a restart; a
 * file that no longer loads keeps the last good version and says why; an unknown @name is an
 * error listing the names, never a message to the model.
 */

const ECHO = '../workday/echo.yaml';
let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const definition = (name: string): string =>
  `---\nname: ${name}\ndescription: test agent ${name}\nmodel: script:${fixture(ECHO)}\n---\nYou are ${name}.\n`;

async function type(fleet: SpawnFleet, pane: string, line: string): Promise<void> {
  await fleet.tmux.tmux('send-keys', '-t', pane, '-l', line);
  await fleet.tmux.tmux('send-keys', '-t', pane, 'Enter');
}

/** The screen's text with the dashboard's own line breaks taken out, so a wrapped message reads whole. */
const joined = (screen: string): string => screen.replace(/\n/g, '');

describe('live definitions and config', () => {
  it('a pane sees a definition added, broken (keeping the last good one), and removed, without a restart; @unknown and /agent spawn unknown are errors listing the names', async () => {
    f = spawnFleet({ definitions: { echo: ECHO } });
    expect((await f.spawnAgent(['--agent', 'echo', '--id', 'pane', 'hello'])).exitCode).toBe(0);
    await eventually(() => f!.record('pane').status === 'idle', 30_000, 'the agent to go idle');
    const pane = f.record('pane').tmux!.paneId;

    // A typo: an error listing what exists, and nothing reaches the model.
    await type(f, pane, '@ghost look at this');
    await f.tmux.waitFor(
      pane,
      /✗ no agent definition named 'ghost' — you can spawn: echo, general \(\/agent list shows them\)/,
    );
    await type(f, pane, '/agent spawn ghost look at this');
    await f.tmux.waitFor(pane, /✗ no agent definition named 'ghost'[^\n]*\n[\s\S]*✗ no agent definition named 'ghost'/);
    expect(readFileSync(f.layout.transcript('pane'), 'utf8')).not.toContain('look at this');
    // A path still goes to the model.
    await type(f, pane, '@notes.md summarize');
    await eventually(
      () => readFileSync(f!.layout.transcript('pane'), 'utf8').includes('@notes.md summarize'),
      30_000,
      'the path line to reach the model',
    );

    // Added after the agent started.
    const file = join(f.layout.agentsDir, 'helper.md');
    writeFileSync(file, definition('helper'));
    await f.tmux.waitFor(pane, /definitions reloaded: added helper/);
    await type(f, pane, '/agent list');
    await f.tmux.waitFor(pane, /helper\s+test agent helper/);
    await type(f, pane, '@helper say hi');
    await f.tmux.waitFor(pane, /started helper-[a-z0-9]{6} \(helper\)/);

    // Broken: the last good version stays, and the pane says why in one line.
    writeFileSync(file, '---\nname: helper\ndescription: test agent helper\nmax_turns: many\n---\nbody\n');
    const broken = await f.tmux.waitFor(pane, /✗ [^\n]*helper\.md[^\n]*— keeping the last good 'helper'/);
    expect(broken).not.toMatch(/removed helper/);
    await type(f, pane, '/agent list');
    await f.tmux.waitFor(
      pane,
      /keeping the last good 'helper'[\s\S]*› \/agent list\n[\s\S]*helper\s+test agent helper[\s\S]*✗ [^\n]*helper\.md/,
    );
    // A spawn starts a child that reads its definition itself: it is refused with the file's error, not started from an
    // old copy.
    await type(f, pane, '@helper again');
    await f.tmux.waitFor(pane, /✗ spawn refused: definition 'helper' did not load: [^\n]*helper\.md: max_turns/);

    // Removed: gone from @name.
    rmSync(file);
    await f.tmux.waitFor(pane, /definitions reloaded: removed helper/);
    await type(f, pane, '@helper once more');
    await f.tmux.waitFor(pane, /✗ no agent definition named 'helper' — you can spawn: echo, general/);
  }, 240_000);

  it('the dashboard reloads config without a restart, shows a config error whole and keeps the last good config, and sees definitions change', async () => {
    f = spawnFleet({ definitions: { echo: ECHO } });
    const envArgs = Object.entries({ ...f.env, FLOTILLA_ROOT: f.layout.root }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    await f.tmux.tmux(
      'new-session',
      '-d',
      '-s',
      'dash',
      '-x',
      '80',
      '-y',
      '24',
      '-c',
      f.project,
      ...envArgs,
      process.execPath,
      CLI,
      'watch',
    );
    await f.tmux.waitFor('dash:0', /No agents yet/);
    const good = readFileSync(f.layout.configFile, 'utf8');

    writeFileSync(
      f.layout.configFile,
      `${good}\nlimits:\n  max_running: lots-and-lots-of-agents-please-as-many-as-the-machine-can-take\n`,
    );
    const screen = await eventually(
      async () => {
        const text = joined(await f!.tmux.capture('dash:0'));
        return text.includes('keeping the last good config') && text;
      },
      30_000,
      'the config error on the dashboard',
    );
    // The loader's whole message: file, key, found value, what to do — nothing cut.
    expect(screen).toContain(`✗ ${f.layout.configFile}: 'limits.max_running'`);
    expect(screen).toContain(
      'found "lots-and-lots-of-agents-please-as-many-as-the-machine-can-take" — fix the value or remove the key — keeping the last good config',
    );

    writeFileSync(f.layout.configFile, good);
    const fixed = await f.tmux.waitFor('dash:0', /config reloaded/);
    expect(joined(fixed)).not.toContain('keeping the last good config');

    writeFileSync(join(f.layout.agentsDir, 'reviewer.md'), definition('reviewer'));
    await f.tmux.waitFor('dash:0', /definitions reloaded: added reviewer/);
    writeFileSync(join(f.layout.agentsDir, 'reviewer.md'), '---\nname: reviewer\nmax_turns: many\n---\nbody\n');
    await eventually(
      async () => /reviewer\.md.*keeping the last good 'reviewer'/.test(joined(await f!.tmux.capture('dash:0'))),
      30_000,
      'the kept definition on the dashboard',
    );
  }, 180_000);
});
