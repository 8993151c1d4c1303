import { execa } from 'execa';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOOLS_DIR } from '../../src/layout/package.js';

const EXTRA_CA_MODULE = fileURLToPath(new URL('../../dist/extra-ca-certs.js', import.meta.url));

/**
 * NODE_EXTRA_CA_CERTS kept from a Node's start where the command makes no TLS connection of its own
 * (src/extra-ca-certs.ts): tools/ moves it aside for spawn-agent and flotilla's quick commands, and the command puts
 * it back at once for everything it starts.
 */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flotilla-ca-aside-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** tools/<tool> with a stand-in for node that shows the two variables and its arguments. */
async function through(tool: string, args: string[], env: Record<string, string>): Promise<string> {
  const node = join(dir, 'node');
  writeFileSync(
    node,
    '#!/bin/sh\necho "node=${NODE_EXTRA_CA_CERTS-unset} aside=${FLOTILLA_EXTRA_CA_CERTS-unset} $*"\n',
  );
  chmodSync(node, 0o755);
  const r = await execa(join(TOOLS_DIR, tool), args, {
    env: { PATH: process.env.PATH!, FLOTILLA_NODE: node, ...env },
    extendEnv: false,
  });
  return r.stdout.replace(/ \S*main\.js/, ' main.js');
}

describe('NODE_EXTRA_CA_CERTS aside while a command starts', () => {
  const ca = { NODE_EXTRA_CA_CERTS: '/etc/a proxy/ca.pem' };

  it('spawn-agent and the quick commands start without it; run and up keep it; without it nothing is set', async () => {
    expect(await through('spawn-agent', ['do it'], ca)).toBe(
      'node=unset aside=/etc/a proxy/ca.pem main.js spawn do it',
    );
    expect(await through('flotilla', ['send', 'a', 'hi'], ca)).toBe(
      'node=unset aside=/etc/a proxy/ca.pem main.js send a hi',
    );
    // The in-process harness's model calls are TLS: Node must have the certificates.
    expect(await through('flotilla', ['run', 'x'], ca)).toBe('node=/etc/a proxy/ca.pem aside=unset main.js run x');
    expect(await through('flotilla', ['up'], ca)).toBe('node=/etc/a proxy/ca.pem aside=unset main.js up');
    expect(await through('spawn-agent', ['do it'], {})).toBe('node=unset aside=unset main.js spawn do it');
  });

  it('the command puts it back for what it starts, and reads the file itself for its own TLS', async () => {
    const pem = join(dir, 'ca.pem');
    writeFileSync(pem, '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
    // A Node started as the sh leaves it: the variable aside, then put back by the command (dist/, as it runs).
    const started = (env: Record<string, string>) =>
      execa(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { extraCaCertsBack, extraCaCertsAside } from ${JSON.stringify(EXTRA_CA_MODULE)};
           extraCaCertsBack();
           console.log(JSON.stringify([process.env.NODE_EXTRA_CA_CERTS ?? null, process.env.FLOTILLA_EXTRA_CA_CERTS ?? null, extraCaCertsAside() ?? null]));`,
        ],
        { env: { PATH: process.env.PATH!, ...env }, extendEnv: false },
      ).then((r) => JSON.parse(r.stdout) as (string | null)[]);
    expect(await started({ FLOTILLA_EXTRA_CA_CERTS: pem })).toEqual([pem, null, expect.stringContaining('BEGIN')]);
    // With both set, Node loaded its own: the one aside is dropped, and nothing is read again.
    expect(await started({ FLOTILLA_EXTRA_CA_CERTS: pem, NODE_EXTRA_CA_CERTS: pem })).toEqual([pem, null, null]);
    expect(await started({})).toEqual([null, null, null]);
  });
});
