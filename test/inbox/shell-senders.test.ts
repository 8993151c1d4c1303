import { execa } from 'execa';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { listRecords } from '../../src/fleet/registry.js';
import { CLI } from '../helpers/cli.js';
import { closeTmuxFleet, tempFleet, type TempFleet } from '../helpers/fleet.js';
import { requireTool } from '../helpers/requires.js';
import { fixture, scriptCalls, userTexts } from '../helpers/scripts.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';

const README = fileURLToPath(new URL('../../inbox/README.md', import.meta.url));
const SENDERS = 50;
const EACH = 4;

/** The exact script printed in inbox/README.md, between its markers. */
function scriptFromReadme(): string {
  const m = /<!-- deliver\.sh:begin -->\n```sh\n([\s\S]*?)```\n<!-- deliver\.sh:end -->/.exec(
    readFileSync(README, 'utf8'),
  );
  if (!m) throw new Error('inbox/README.md has no deliver.sh block between its markers');
  return m[1]!;
}

let fleet: TempFleet;
let tmux: TmuxServer;
afterEach(() => closeTmuxFleet(tmux, fleet));

describe("inbox/README.md's shell recipe under load", () => {
  it(`${SENDERS} concurrent dash senders, with mawk and with gawk: every id unique, every message reaches the model once`, async () => {
    const dash = requireTool('dash');
    fleet = tempFleet();
    tmux = tmuxServer();
    const script = join(fleet.project, 'deliver.sh');
    writeFileSync(script, scriptFromReadme());
    const log = join(fleet.project, 'calls.jsonl');
    const env = {
      FLOTILLA_ROOT: fleet.layout.root,
      FLOTILLA_SCRIPT_LOG: log,
      NO_COLOR: '1',
      FLOTILLA_LIMITS_MAX_TURNS: '1000',
    };
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    await tmux.tmux(
      'new-session',
      '-d',
      '-s',
      'agent',
      '-x',
      '100',
      '-y',
      '30',
      '-c',
      fleet.project,
      ...envArgs,
      process.execPath,
      CLI,
      'run',
      '--model',
      `script:${fixture('harness/mail-repeat.yaml')}`,
    );
    await tmux.waitFor('agent', /›/);
    const id = await eventually(() => listRecords(fleet.layout)[0]?.id, 10_000, 'the agent record');

    const ids: string[] = [];
    for (const awk of ['mawk', 'gawk'] as const) {
      // `awk` in the script is this one.
      const bin = join(fleet.project, `bin-${awk}`);
      mkdirSync(bin);
      symlinkSync(requireTool(awk), join(bin, 'awk'));
      const loop = `for k in $(seq ${EACH}); do ${dash} ${script} ${id} "${awk} s$1#$k" </dev/null || exit 1; done`;
      const runs = await Promise.all(
        Array.from({ length: SENDERS }, (_, i) =>
          execa(dash, ['-c', loop, 'sender', String(i)], {
            env: { PATH: `${bin}:${process.env.PATH ?? ''}`, FLOTILLA_ROOT: fleet.layout.root, FLOTILLA_AGENT_ID: '' },
            reject: false,
          }),
        ),
      );
      for (const r of runs) {
        expect(r.stderr).toBe('');
        expect(r.exitCode).toBe(0);
        ids.push(...String(r.stdout).split('\n').filter(Boolean));
      }
    }
    const total = 2 * SENDERS * EACH;
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);

    const box = fleet.layout.inbox(id);
    await eventually(
      () => readdirSync(join(box, 'new')).length === 0 && listRecords(fleet.layout)[0]!.status === 'idle',
      60_000,
      'all mail claimed, the agent idle',
    );
    expect(readdirSync(join(box, 'cur'))).toHaveLength(total);
    expect(readdirSync(box).includes('bad')).toBe(false);
    const seen = new Map<string, number>();
    for (const text of userTexts(scriptCalls(log).at(-1)!))
      for (const m of text.matchAll(/<inbox-message id="([0-9a-z]+)"/g)) seen.set(m[1]!, (seen.get(m[1]!) ?? 0) + 1);
    expect([...seen.keys()].sort()).toEqual([...ids].sort());
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  }, 180_000);
});
