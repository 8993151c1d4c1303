import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { busFor, closeBuses } from '../../src/bus/open.js';
import { defaultConfig } from '../../src/config/schema.js';
import { BUSES, natsServer, personBus, type BusKind, type NatsServer } from '../helpers/nats.js';
import { fixture, scriptCalls, userTexts } from '../helpers/scripts.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { bannerId, project, type Project } from '../hooks-e2e/project.js';

// A resumed agent shows the mail it adopted at once (no prompt, no further send),
// and mail still addressed to the agent it continues reaches it while it lives.
const TWO_STEP = fixture('resume/two-step.yaml');

// On every bus (docs/design.md §8, §18): on nats:// (a real nats-server started here, named in
// the person's config) the mail waits on the fleet's stream while nobody runs the old id, and
// the successor's harness feeds it from there.
describe.each(BUSES)('resume and mail on the $bus bus', ({ bus: kind }: { bus: BusKind }) => {
  let p: Project;
  let tmux: TmuxServer;
  let server: NatsServer | undefined;
  beforeAll(async () => {
    if (kind === 'nats') server = await natsServer();
  }, 120_000);
  afterAll(async () => {
    await server?.kill();
  });
  beforeEach(() => {
    p = project('flotilla-resume-mail-');
    personBus(join(p.project, '.xdg'), kind, server);
    p.agent('worker', { permissions: { permission_mode: 'dont_ask' } });
    tmux = tmuxServer();
  });
  afterEach(async () => {
    await closeBuses();
    await tmux.kill();
    p.cleanup();
  });
  /** Sent as a person's `flotilla send` sends it: on the fleet's bus. */
  const deliver = async (draft: { from: string; to: string; kind: 'message'; body: string }) =>
    busFor(p.layout, { fleet: { ...defaultConfig().fleet, bus: server?.url ?? 'maildir' } }).mail.deliver(draft);

  async function endedWithMail(body: string): Promise<string> {
    const first = await p.run([
      'run',
      '--agent',
      'worker',
      '--model',
      `script:${TWO_STEP}`,
      '--oneshot',
      'count the things',
    ]);
    expect(first.exitCode, first.stderr).toBe(0);
    const oldId = bannerId(first.stderr);
    await deliver({ from: 'human', to: oldId, kind: 'message', body });
    return oldId;
  }

  it('a window resume with no prompt shows the adopted mail at once; mail to the old id after the resume reaches the successor', async () => {
    const oldId = await endedWithMail('adopted-note-5521');
    const log = join(p.project, 'calls.jsonl');
    const r = await p.run(['resume', oldId], { env: { FLOTILLA_SCRIPT_LOG: log, FLOTILLA_TMUX_SOCKET: tmux.socket } });
    expect(r.exitCode, r.stderr).toBe(0);
    const newId = r.stdout.trim();
    const seen = (word: string) =>
      scriptCalls(log).some((c) => userTexts(c).some((t) => t.includes('<inbox-message') && t.includes(word)));
    await eventually(() => seen('adopted-note-5521'), 30_000, 'the adopted mail in a model call');

    // Sent to the old id by someone who still knows the agent by that name.
    await deliver({ from: 'human', to: oldId, kind: 'message', body: 'late-note-8830' });
    await eventually(() => seen('late-note-8830'), 30_000, 'mail to the old id in a model call of the successor');
    expect([...new Set(scriptCalls(log).map((c) => c.pid))]).toEqual([p.record(newId).pid]);
  }, 120_000);

  it('a background resume with no prompt takes the waiting mail as its instruction', async () => {
    const oldId = await endedWithMail('adopted-note-7310');
    const r = await p.run(['resume', oldId, '--background', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const newId = (JSON.parse(r.stdout) as { id: string }).id;
    await eventually(() => p.record(newId).lastTask?.status === 'completed', 30_000, 'the task on the adopted mail');
    expect(readFileSync(p.layout.output(newId), 'utf8')).toContain('adopted-note-7310');
  }, 120_000);

  it('a background resume with no prompt and no mail is refused, saying what to give it', async () => {
    const first = await p.run([
      'run',
      '--agent',
      'worker',
      '--model',
      `script:${TWO_STEP}`,
      '--oneshot',
      'count the things',
    ]);
    const oldId = bannerId(first.stderr);
    const r = await p.run(['resume', oldId, '--background'], { input: '' });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('no prompt given');
    expect(p.ids()).toEqual([oldId]);
  }, 120_000);
});
