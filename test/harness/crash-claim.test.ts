import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deliver } from '../../src/inbox/deliver.js';
import { readTranscript } from '../../src/transcript/reader.js';
import { flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { fixture, scriptCalls, userTexts } from '../helpers/scripts.js';

let fleet: TempFleet;
afterEach(() => fleet?.cleanup());

const box = (id: string, sub: string) => {
  try {
    return readdirSync(join(fleet.layout.inbox(id), sub));
  } catch {
    return [];
  }
};

describe('crash between transcript append and claim (§4)', () => {
  it('re-surfaces the message exactly once after resume, and adopted mail arrives once', async () => {
    fleet = tempFleet();
    const env = { FLOTILLA_ROOT: fleet.layout.root, FLOTILLA_AGENTS_DEFAULT_PERMISSION_MODE: 'dont_ask' };
    const first = await deliver(fleet.layout, {
      from: 'human',
      to: 'crashy',
      kind: 'message',
      body: 'first-letter-body',
    });

    // The harness records the surfaced message, then dies before it can claim it.
    const crashed = await flotilla(
      ['run', '--id', 'crashy', '--model', `script:${fixture('harness/mail-once.yaml')}`, 'start'],
      {
        cwd: fleet.project,
        env: { ...env, FLOTILLA_FAULT: 'kill-before-claim' },
      },
    );
    expect(crashed.signal).toBe('SIGKILL');
    const t = readTranscript(fleet.layout, 'crashy');
    const surfaced = t.entries.filter((e) => e.type === 'surfaced' && e.text.includes('first-letter-body'));
    expect(surfaced).toHaveLength(1);
    // The transcript names surfaced mail by message id (docs/transcripts.md).
    expect(surfaced[0]).toMatchObject({ source: 'inbox', ids: [first.message.id] });
    expect(box('crashy', 'new')).toHaveLength(1);

    // More mail arrives for the dead agent.
    await deliver(fleet.layout, { from: 'human', to: 'crashy', kind: 'message', body: 'second-letter-body' });

    const log = join(fleet.project, 'calls.jsonl');
    const resumed = await flotilla(['resume', 'crashy', '--oneshot', 'continue'], {
      cwd: fleet.project,
      env: { ...env, FLOTILLA_SCRIPT_LOG: log },
    });
    expect(resumed.exitCode).toBe(0);
    // The crash came before the reply was recorded, so that turn is asked again: the first reply.
    expect(resumed.stdout).toBe('noted');

    const users = userTexts(scriptCalls(log)[0]!);
    expect(users.filter((t) => t.includes('first-letter-body'))).toHaveLength(1);
    expect(users.filter((t) => t.includes('second-letter-body'))).toHaveLength(1);
    expect(box('crashy', 'new')).toEqual([]);
    for (const id of readdirSync(fleet.layout.inboxRoot)) expect(box(id, 'bad')).toEqual([]);
  });
});
