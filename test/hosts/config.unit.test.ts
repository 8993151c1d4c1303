import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/schema.js';
import { allHosts, hostNamed } from '../../src/hosts/hosts.js';
import { machineName, selfHost } from '../../src/hosts/self.js';
import { remoteFlotillaCommand, sshArgv } from '../../src/hosts/ssh.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/** `hosts:` in config (docs/design.md §17): validated with one-line errors, never set by an untrusted project. */
let fleet: TempFleet | undefined;
afterEach(() => fleet?.cleanup());

async function load(project: string, trusted = true) {
  fleet = tempFleet();
  mkdirSync(fleet.layout.root, { recursive: true });
  writeFileSync(fleet.layout.configFile, project);
  return loadConfig({ layout: fleet.layout, userFile: null, env: {}, trusted });
}

describe('hosts: in config', () => {
  it('reads a host with defaults for what it leaves out', async () => {
    const { config } = await load('hosts:\n  gpu1:\n    ssh: me@gpu1.example\n');
    expect(hostNamed(config, 'gpu1')).toEqual({
      name: 'gpu1',
      ssh: 'me@gpu1.example',
      port: null,
      ssh_options: [],
      flotilla: 'flotilla',
      root: null,
      cwd: null,
      env: {},
      connect_timeout_secs: 10,
      lost_after_secs: null,
    });
    expect(allHosts(defaultConfig())).toEqual([]);
  });

  it.each([
    ['a name that is not one', 'hosts:\n  GPU 1:\n    ssh: gpu1\n', "'hosts.GPU 1' is not a host name"],
    [
      "'local', which is this machine",
      'hosts:\n  local:\n    ssh: gpu1\n',
      "'hosts.local' is reserved: 'local' is this machine",
    ],
    [
      'a destination that would be an ssh option',
      'hosts:\n  gpu1:\n    ssh: -oProxyCommand=sh\n',
      "'hosts.gpu1.ssh' is not an ssh destination",
    ],
    ['a missing destination', 'hosts:\n  gpu1:\n    port: 22\n', "'hosts.gpu1.ssh'"],
    ['a port out of range', 'hosts:\n  gpu1:\n    ssh: gpu1\n    port: 70000\n', "'hosts.gpu1.port'"],
    ['an unknown key', 'hosts:\n  gpu1:\n    ssh: gpu1\n    user: me\n', 'hosts.gpu1'],
    [
      'an env name that is not one',
      'hosts:\n  gpu1:\n    ssh: gpu1\n    env: {"A B": x}\n',
      'is not an environment variable name',
    ],
  ])('refuses %s with one line saying what to fix', async (_what, yaml, expected) => {
    let message = '';
    try {
      await load(yaml);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(expected);
    expect(message).toContain('— fix the value or remove the key');
    expect(message).not.toContain('\n');
  });

  it('ignores hosts in an untrusted project: an ssh option can run a command here', async () => {
    const { config, trust } = await load(
      'hosts:\n  gpu1:\n    ssh: gpu1\n    ssh_options: [-o, ProxyCommand=touch /tmp/pwned]\n',
      false,
    );
    expect(config.hosts).toEqual({});
    expect(trust.ignored).toContain('hosts.gpu1');
  });

  it('refuses an unknown host with the names there are', async () => {
    const { config } = await load('hosts:\n  gpu1:\n    ssh: gpu1\n  gpu2:\n    ssh: gpu2\n');
    expect(() => hostNamed(config, 'gpu3')).toThrow(
      "no host 'gpu3' in the config — known hosts: gpu1, gpu2; add it under hosts: in config.yaml",
    );
    expect(() => hostNamed(defaultConfig(), 'gpu3')).toThrow('no hosts are configured');
  });
});

describe('the ssh command line', () => {
  const host = {
    name: 'gpu1',
    ssh: 'me@gpu1',
    port: 2222,
    ssh_options: ['-i', '/k/id'],
    flotilla: '~/fl/bin/flotilla',
    root: "/srv/it's here",
    cwd: '/srv',
    env: { HOME: '/h', X: 'a b' },
    connect_timeout_secs: 7,
    lost_after_secs: null,
  };

  it('never prompts, and puts the destination after -- so it cannot be read as an option', () => {
    const argv = sshArgv(host, 'true');
    expect(argv.slice(0, 4)).toEqual(['-o', 'BatchMode=yes', '-o', 'ConnectTimeout=7']);
    expect(argv).toContain('-T');
    expect(argv.slice(-5)).toEqual(['-i', '/k/id', '--', 'me@gpu1', 'true']);
    expect(argv.slice(argv.indexOf('-p'), argv.indexOf('-p') + 2)).toEqual(['-p', '2222']);
    expect(sshArgv(host, 'x', { tty: true })).toContain('-t');
  });

  it('runs the configured flotilla with its env, root and cwd, each argument reaching it whole', () => {
    const cmd = remoteFlotillaCommand(host, ['send', 'a-1', "it's $HOME; rm -rf /"]);
    expect(cmd).toBe(
      `cd /srv && exec env FLOTILLA_HOST=gpu1 HOME=/h X='a b' ~/fl/bin/flotilla --root '/srv/it'\\''s here' send a-1 'it'\\''s $HOME; rm -rf /'`,
    );
    // What the remote sh makes of it: the same words (printed by a stand-in for flotilla).
    const words = execFileSync(
      'sh',
      [
        '-c',
        cmd.replace(/^cd \/srv && exec env FLOTILLA_HOST=gpu1 HOME=\/h X='a b' ~\/fl\/bin\/flotilla/, "printf '%s\\n'"),
      ],
      { encoding: 'utf8' },
    );
    expect(words.split('\n').slice(0, -1)).toEqual(['--root', "/srv/it's here", 'send', 'a-1', "it's $HOME; rm -rf /"]);
  });
});

describe("this host's name (selfHost)", () => {
  it('is $FLOTILLA_HOST, else fleet.host, else the hostname made a host name', () => {
    expect(selfHost({ host: 'cfg-1' }, { FLOTILLA_HOST: 'gpu1' })).toBe('gpu1');
    expect(selfHost({ host: 'cfg-1' }, {})).toBe('cfg-1');
    // A value that is not a host name is not taken from the environment.
    expect(selfHost({ host: 'cfg-1' }, { FLOTILLA_HOST: 'Bad Name!' })).toBe('cfg-1');
    expect(selfHost({ host: null }, {})).toBe(machineName(hostname()));
    expect(machineName('Build.Box_7.example.COM')).toBe('build-box_7-example-com');
  });

  it('fleet.host is checked as a host name, with one line naming the key', async () => {
    expect((await load('fleet:\n  host: gpu-2\n')).config.fleet.host).toBe('gpu-2');
    await expect(load('fleet:\n  host: GPU 2\n')).rejects.toThrow(/fleet\.host.*expected a host name/);
    expect(
      (await load('fleet:\n  lost_after_secs: 7\nhosts:\n  g:\n    ssh: g\n    lost_after_secs: 3\n')).config.hosts.g
        ?.lost_after_secs,
    ).toBe(3);
  });
});
