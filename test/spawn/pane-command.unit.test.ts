import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HARNESS_MALLOC_TUNABLES } from '../../src/malloc-tunables.js';
import { paneCommand } from '../../src/spawn/pane-command.js';

/**
 * The sh an agent's pane runs (§5.7), run here without tmux: the "harness" is a real process
 * that ends one way or another, the "reaper" a script that writes down how it was called.
 */
let dir: string;
let reaper: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flotilla-pane-'));
  reaper = join(dir, 'reaper');
  writeFileSync(
    reaper,
    `#!/bin/sh\necho "$* agent=\${FLOTILLA_AGENT_ID-unset}" > ${join(dir, 'reaped')}\necho noise\n`,
  );
  chmodSync(reaper, 0o755);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const run = (harness: string) => {
  const [file, ...args] = paneCommand(['sh', '-c', harness], [reaper, '--root', '/r o/ot', 'reap']);
  return execa(file!, args, {
    reject: false,
    env: { TMUX_PANE: '%7', FLOTILLA_AGENT_ID: 'dead-1', PATH: process.env.PATH },
    extendEnv: false,
  });
};
const reaped = () => (existsSync(join(dir, 'reaped')) ? readFileSync(join(dir, 'reaped'), 'utf8').trim() : null);

describe("an agent pane's sh", () => {
  it('a harness killed by a signal: the reaper runs for its pane with the status, as no agent, quietly', async () => {
    const r = await run('kill -KILL $$');
    expect(r.exitCode).toBe(137);
    expect(reaped()).toBe('--root /r o/ot reap --pane %7 --exit-status 137 agent=unset');
    // The reaper's stdout stays out of the pane, whose last line says how the harness ended.
    expect(r.stdout).toBe('');
  });

  it("a harness's own exit, with any status, starts no reaper and is the pane's status", async () => {
    for (const code of [0, 1, 3]) {
      const r = await run(`echo out; exit ${code}`);
      expect(r.exitCode).toBe(code);
      expect(r.stdout).toBe('out');
    }
    expect(reaped()).toBeNull();
  });

  it('the keys it is told to unset reach neither the harness nor the reaper; other variables do', async () => {
    const [file, ...args] = paneCommand(
      ['sh', '-c', 'echo "key=${FLOTILLA_NATS_TOKEN-unset} other=${OTHER-unset}"; kill -KILL $$'],
      ['sh', '-c', `echo "key=\${FLOTILLA_NATS_TOKEN-unset}" > ${join(dir, 'reaped')}`],
      ['FLOTILLA_NATS_TOKEN', 'ANTHROPIC_API_KEY'],
    );
    const r = await execa(file!, args, {
      reject: false,
      env: { FLOTILLA_NATS_TOKEN: 'secret', OTHER: 'kept', PATH: process.env.PATH },
      extendEnv: false,
    });
    expect(r.stdout).toBe('key=unset other=kept');
    expect(r.exitCode).toBe(137);
    expect(reaped()).toBe('key=unset');
  });

  it("every harness gets glibc's malloc thresholds, but a person's own GLIBC_TUNABLES is kept as it is", async () => {
    const pane = (env: Record<string, string>) => {
      const [file, ...args] = paneCommand(['sh', '-c', 'echo "${GLIBC_TUNABLES-unset}"'], [reaper]);
      return execa(file!, args, { reject: false, env: { PATH: process.env.PATH!, ...env }, extendEnv: false });
    };
    expect((await pane({})).stdout).toBe(HARNESS_MALLOC_TUNABLES);
    expect((await pane({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' })).stdout).toBe('glibc.malloc.arena_max=2');
  });

  it("a vendor CLI's shim gets NODE_EXTRA_CA_CERTS aside, under its own name; without one, neither is set", async () => {
    const show = 'echo "node=${NODE_EXTRA_CA_CERTS-unset} aside=${FLOTILLA_EXTRA_CA_CERTS-unset}"';
    const pane = (caCertsAside: boolean, env: Record<string, string>) => {
      const [file, ...args] = paneCommand(['sh', '-c', show], [reaper], [], { caCertsAside });
      return execa(file!, args, { reject: false, env: { PATH: process.env.PATH!, ...env }, extendEnv: false });
    };
    const ca = { NODE_EXTRA_CA_CERTS: '/etc/a proxy/ca.pem' };
    expect((await pane(true, ca)).stdout).toBe('node=unset aside=/etc/a proxy/ca.pem');
    expect((await pane(true, {})).stdout).toBe('node=unset aside=unset');
    // The in-process harness makes its model's TLS connections: it keeps the variable.
    expect((await pane(false, ca)).stdout).toBe('node=/etc/a proxy/ca.pem aside=unset');
  });

  it("the harness's words reach it as they were, never through a shell's parsing", async () => {
    const [file, ...args] = paneCommand(['printf', '%s|', 'a b', '$HOME', "it's", '; exit 9'], [reaper]);
    const r = await execa(file!, args, { reject: false });
    expect(r.stdout).toBe("a b|$HOME|it's|; exit 9|");
    expect(r.exitCode).toBe(0);
  });
});
