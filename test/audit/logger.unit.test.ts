import { readFileSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentLogger } from '../../src/audit/logger.js';
import { holdForRedaction } from '../../src/secrets/redact.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/** The harness log (state/logs/<id>.log): pino's JSON-lines shape, without loading pino. */
describe('agent log', () => {
  let fleet: TempFleet | undefined;
  afterEach(() => fleet?.cleanup());

  const lines = (f: TempFleet, id: string): Record<string, unknown>[] =>
    readFileSync(f.layout.log(id), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('writes one JSON line per call at or above its level, with pino level numbers and the base fields', async () => {
    fleet = tempFleet();
    const log = await createAgentLogger(fleet.layout, 'lead-aaaaaa', 'info');
    log.debug({ hidden: true }, 'not written');
    log.info({ turn: 1 }, 'turn started');
    log.warn({}, 'careful');
    log.error({ err: new Error('boom') }, 'failed');
    const got = lines(fleet, 'lead-aaaaaa');
    expect(got.map((l) => [l.level, l.msg])).toEqual([
      [30, 'turn started'],
      [40, 'careful'],
      [50, 'failed'],
    ]);
    expect(got[0]).toMatchObject({ pid: process.pid, agent: 'lead-aaaaaa', turn: 1, time: expect.any(Number) });
    expect(got[2]!.err).toMatchObject({ type: 'Error', message: 'boom', stack: expect.stringContaining('boom') });
  });

  it('never writes a secret value this process holds, and survives fields JSON cannot write', async () => {
    fleet = tempFleet();
    const release = holdForRedaction('API_TOKEN', 'sekrit-value-123456');
    try {
      const log = await createAgentLogger(fleet.layout, 'lead-bbbbbb', 'debug');
      const cyclic: Record<string, unknown> = { n: 1n };
      cyclic.self = cyclic;
      log.info({ header: 'Bearer sekrit-value-123456' }, 'called with sekrit-value-123456');
      log.debug({ cyclic }, 'odd fields');
      const text = readFileSync(fleet.layout.log('lead-bbbbbb'), 'utf8');
      expect(text).not.toContain('sekrit-value-123456');
      expect(lines(fleet, 'lead-bbbbbb').map((l) => l.msg)).toEqual([
        expect.stringContaining('called with'),
        'odd fields',
      ]);
    } finally {
      release();
    }
  });

  it('a log folder removed under it does not stop the agent', async () => {
    fleet = tempFleet();
    const log = await createAgentLogger(fleet.layout, 'lead-cccccc');
    rmSync(fleet.layout.log('lead-cccccc'), { force: true });
    rmSync(fleet.layout.log('lead-cccccc').replace(/[^/]+$/, ''), { recursive: true, force: true });
    expect(() => log.info({}, 'still fine')).not.toThrow();
  });
});
