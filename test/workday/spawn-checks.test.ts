import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRecord } from '../../src/fleet/registry.js';
import { loadConfig } from '../../src/config/load.js';
import { launchAgent } from '../../src/spawn/launch.js';
import { prepareSpawn } from '../../src/spawn/prepare.js';
import { SPAWN_AGENT } from '../helpers/cli.js';
import { recordInput } from '../helpers/records.js';
import { eventually } from '../helpers/tmux.js';
import { spawnFleet, type SpawnFleet } from '../spawn/helpers.js';

/** Spawns that fail up front — exit 1, one line, no window, no record. */

const ECHO = '../workday/echo.yaml';
let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe('check before opening', () => {
  it('each bad spawn exits 1 (2 for no task) with one line on stderr, opens no window and writes no record', async () => {
    f = spawnFleet({ definitions: { echo: ECHO } });
    writeFileSync(
      join(f.layout.agentsDir, 'broken.md'),
      '---\nname: broken\ndescription: a file whose model line is not YAML\nmodel: [script:x.yaml\n---\nbody\n',
    );
    // A spawn with no task is a usage error (exit 2); the rest are refusals (exit 1).
    const cases: [string, string[], RegExp, number?][] = [
      ['empty prompt', ['--agent', 'echo', '  '], /no task given/, 2],
      [
        'nonexistent --cwd',
        ['--agent', 'echo', '--cwd', join(f.project, 'nope'), 'hi'],
        /working directory '.*nope' does not exist/,
      ],
      ['unknown provider', ['--model', 'nope:x', 'hi'], /invalid model 'nope:x': unknown provider 'nope'/],
      ['missing provider key', ['--model', 'anthropic:claude-x', 'hi'], /needs ANTHROPIC_API_KEY, which is not set/],
      [
        'unconfigured compatible server',
        ['--model', 'openai-compatible:local/m', 'hi'],
        /provider 'local', which config does not define/,
      ],
      [
        'missing script file',
        ['--model', `script:${join(f.project, 'missing.yaml')}`, 'hi'],
        /cannot read scripted model file '.*missing.yaml'/,
      ],
      [
        'definition that is not YAML',
        ['--agent', 'broken', 'hi'],
        /broken\.md: frontmatter is not valid YAML at line 4 \('model'\)/,
      ],
      ['no model and no demo definitions', ['hi'], /no model is configured — .*flotilla up/],
    ];
    for (const [what, args, message, code] of cases) {
      const r = await f.spawnAgent(args);
      expect(r.exitCode, what).toBe(code ?? 1);
      // One line for a person (a refusal may add its machine-readable bracketed line, §2).
      expect(
        r.stderr.split('\n').filter((l) => !l.startsWith('[flotilla:')),
        what,
      ).toHaveLength(1);
      expect(r.stderr, what).toMatch(message);
      expect(r.stdout, what).toBe('');
    }
    expect(await f.windows()).toEqual([]);
    expect(f.records()).toEqual([]);
  });

  it('headless with no model and no demo definitions: one line saying how to configure a model, exit 1', async () => {
    f = spawnFleet();
    const r = await execa(process.execPath, [join(SPAWN_AGENT, '../../dist/cli/main.js'), 'run'], {
      cwd: f.project,
      env: f.env,
      extendEnv: false,
      reject: false,
      input: 'hi',
    });
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toMatch(
      /^flotilla: spawn refused: no model is configured — set ANTHROPIC_API_KEY or OPENAI_API_KEY, pass --model provider:model-id, put 'model:' in \.flotilla\/config\.yaml, or run 'flotilla up' once for the offline demo$/,
    );
    expect(f.records()).toEqual([]);
  });

  it('a failure after the window opened ends the record failed with the message, which wait, status and the log show', async () => {
    f = spawnFleet({ definitions: { echo: ECHO } });
    const { config } = await loadConfig({ layout: f.layout, env: f.env, userFile: null });
    createRecord(f.layout, recordInput('anchor', { status: 'idle', cwd: f.project }));
    const prepared = await prepareSpawn(
      f.layout,
      config,
      { prompt: 'x', mode: 'interactive', id: 'gone-def', agent: 'echo' },
      { parent: null, env: f.env },
    );
    // The definition disappears between the check and the child's start.
    writeFileSync(join(f.layout.agentsDir, 'echo.md'), '---\nname: other\ndescription: renamed\n---\nx\n');
    await launchAgent(f.layout, config, prepared, { env: f.env }).catch(() => undefined);
    const rec = await eventually(
      () => (f!.record('gone-def').status === 'failed' ? f!.record('gone-def') : undefined),
      20_000,
      'the record to fail',
    );
    expect(rec.exitReason).toMatch(/no agent definition named 'echo'/);
    const waited = await f.flotilla(['wait', 'gone-def']);
    expect(waited.exitCode).toBe(1);
    expect(waited.stdout).toContain("## gone-def: failed (no agent definition named 'echo'");
    const status = await f.flotilla(['status']);
    expect(status.stdout).toMatch(/gone-def[\s\S]*no agent definition named/);
    const log = await execa('cat', [f.layout.log('gone-def')], { reject: false });
    expect(String(log.stdout)).toContain("could not start: no agent definition named 'echo'");
  });

  it('--wait says on stderr when the child waits for an approval, and how to answer it', async () => {
    f = spawnFleet({ definitions: { asker: '../workday/asks.yaml' } });
    const env = { ...f.env, FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'default' };
    const child = execa(SPAWN_AGENT, ['--wait', '--agent', 'asker', '--id', 'asker', 'make the marker'], {
      cwd: f.project,
      env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const line = await eventually(
      () => /^flotilla: asker is waiting for your approval.*$/m.exec(stderr)?.[0],
      30_000,
      'the approval notice',
    );
    const req = /'flotilla approve (\S+)'/.exec(line)?.[1];
    expect(req).toBeTruthy();
    expect(line).toContain(`'flotilla deny ${req}'`);
    expect(line).toContain("in its pane ('flotilla attach asker')");
    const ok = await f.flotilla(['approve', req!], { FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'default' });
    expect(ok.exitCode).toBe(0);
    const done = await child;
    expect(done.exitCode).toBe(0);
    expect(String(done.stdout)).toBe('Result: wrote-it');
  });
});
