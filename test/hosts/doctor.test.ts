import { afterEach, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/versions.js';
import { startSshd, type Sshd } from '../helpers/sshd.js';
import { twoHosts, type TwoHosts } from './helpers.js';

/**
 * `flotilla doctor --host NAME` against a real second host (OpenSSH's server on 127.0.0.1 with
 * its own keys, HOME and fleet root): what a person sees when it works, and each way it
 * cannot (docs/design.md §17).
 */
let sshd: Sshd | undefined;
const pairs: TwoHosts[] = [];
afterEach(async () => {
  for (const p of pairs.splice(0)) await p.close();
  await sshd?.kill();
  sshd = undefined;
});

/** A local fleet whose config names one host, `r1`, reached through one sshd for the test. */
async function fleetsWithHost(
  extra: { flotilla?: string; env?: Record<string, string>; port?: number } = {},
): Promise<TwoHosts> {
  sshd ??= await startSshd();
  const pair = await twoHosts({ ...extra, sshd });
  pairs.push(pair);
  return pair;
}

const line = (out: string, name: string): string => out.split('\n').find((l) => l.includes(` ${name}:`)) ?? '';

describe('flotilla doctor --host', { timeout: 300_000 }, () => {
  it('reaches the host without a prompt and reports Flotilla, Node and tmux there', async () => {
    const { local, remote } = await fleetsWithHost();
    const r = await local.flotilla(['doctor', '--host', 'r1']);
    expect(line(r.stdout, 'r1: ssh')).toBe(`ok    r1: ssh: root@127.0.0.1 port ${sshd!.port}`);
    expect(line(r.stdout, 'r1: flotilla')).toMatch(
      new RegExp(`^ok {4}r1: flotilla: ${VERSION.replace(/\./g, '\\.')} at .*tools/flotilla$`),
    );
    expect(line(r.stdout, 'r1: node')).toMatch(/^ok {4}r1: node: v\d+\.\d+/);
    expect(line(r.stdout, 'r1: tmux')).toMatch(/^ok {4}r1: tmux: tmux \d/);
    // The fleet root checked is the one there, not this one.
    expect(line(r.stdout, 'r1: fleet root')).toContain(remote.layout.root);
    expect(r.stdout).not.toContain(local.layout.root);
    const json = await local.flotilla(['doctor', '--host', 'r1', '--json']);
    const checks = JSON.parse(json.stdout) as { name: string; ok: boolean }[];
    expect(checks.map((c) => c.name)).toEqual(
      expect.arrayContaining(['r1: ssh', 'r1: flotilla', 'r1: node', 'r1: tmux']),
    );
  });

  it('fails with what to do when the host is unreachable, lacks Flotilla or lacks Node', async () => {
    // Nothing listens on a port taken from a server that is then stopped.
    const closed = await startSshd();
    const port = closed.port;
    await closed.kill();
    const down = await fleetsWithHost({ port });
    const r = await down.local.flotilla(['doctor', '--host', 'r1']);
    expect(r.exitCode).toBe(1);
    expect(line(r.stdout, 'r1: ssh')).toMatch(
      /^FAIL {2}r1: ssh: host 'r1' \(root@127\.0\.0\.1\) is unreachable: .*(refused|closed).* — make 'ssh -o BatchMode=yes root@127\.0\.0\.1 true' work without a prompt/,
    );

    const noFlotilla = await fleetsWithHost({ flotilla: '/opt/nowhere/flotilla' });
    const nf = await noFlotilla.local.flotilla(['doctor', '--host', 'r1']);
    expect(nf.exitCode).toBe(1);
    expect(line(nf.stdout, 'r1: flotilla')).toMatch(
      /^FAIL {2}r1: flotilla: '\/opt\/nowhere\/flotilla' not found on root@127\.0\.0\.1.* — install Flotilla there .* or set hosts\.r1\.flotilla to its path$/,
    );

    const noNode = await fleetsWithHost({ env: { PATH: '/nonexistent' } });
    const nn = await noNode.local.flotilla(['doctor', '--host', 'r1']);
    expect(nn.exitCode).toBe(1);
    expect(line(nn.stdout, 'r1: node')).toMatch(
      /^FAIL {2}r1: node: Node\.js not found on root@127\.0\.0\.1: .*node.* — install Node\.js 20\.19 or newer there/,
    );
  });

  it('refuses an unknown host name as a usage error naming the configured ones', async () => {
    const { local } = await fleetsWithHost();
    const r = await local.flotilla(['doctor', '--host', 'gpu9']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim()).toBe(
      "flotilla: no host 'gpu9' in the config — known hosts: r1; add it under hosts: in config.yaml (hosts: {gpu9: {ssh: user@machine}})",
    );
  });
});
