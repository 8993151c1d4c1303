import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { socketArgs, tmuxSocket } from '../../src/tmux/client.js';
import { shellCommand, shellQuote, tmuxQuote } from '../../src/tmux/quote.js';
import { fleetSessionName } from '../../src/tmux/session-name.js';
import { parseTmuxVersion, tmuxNewEnough, tmuxVersionRefusal } from '../../src/tmux/version.js';

describe('tmux version', () => {
  it.each([
    ['tmux 3.3a', 3, 3, 'a', false, true],
    ['tmux 3.2', 3, 2, '', false, true],
    ['tmux 3.1c', 3, 1, 'c', false, false],
    ['tmux next-3.4', 3, 4, '', true, true],
    ['tmux 3.0-rc5', 3, 0, 'rc5', false, false],
    ['tmux 2.9a\n', 2, 9, 'a', false, false],
    ['tmux 3.10', 3, 10, '', false, true],
  ])('%j → %i.%i%s', (text, major, minor, suffix, next, ok) => {
    const v = parseTmuxVersion(text)!;
    expect(v).toMatchObject({ major, minor, suffix, next });
    expect(tmuxNewEnough(v)).toBe(ok);
    expect(tmuxVersionRefusal(v) === null).toBe(ok);
  });

  it('treats master as new enough and rejects nonsense', () => {
    expect(tmuxNewEnough(parseTmuxVersion('tmux master')!)).toBe(true);
    expect(parseTmuxVersion('bash: tmux: command not found')).toBeNull();
    expect(tmuxVersionRefusal(parseTmuxVersion('tmux 3.1c'))?.bracket).toBe(
      '[flotilla:tmux-too-old version=3.1c min=3.2]',
    );
    expect(tmuxVersionRefusal(null)?.bracket).toBe('[flotilla:tmux-missing min=3.2]');
  });
});

describe('fleet session name', () => {
  it('is <prefix>-<slug>-<hash>, with no . or : and distinct for same-named projects', () => {
    const a = fleetSessionName('flotilla', '/home/me/My.Project:v2');
    expect(a).toMatch(/^flotilla-my-project-v2-[0-9a-f]{6}$/);
    const b = fleetSessionName('flotilla', '/srv/other/My.Project:v2');
    expect(b).not.toBe(a);
    expect(fleetSessionName('flotilla', '/home/me/My.Project:v2')).toBe(a);
    expect(fleetSessionName('fl.o:t', '/x/...')).toMatch(/^fl-o-t-project-[0-9a-f]{6}$/);
  });
});

describe('quoting', () => {
  it('sh-quotes any argv so sh sees the same words', () => {
    const argv = [
      'plain',
      'two words',
      `it's`,
      '"dq"',
      '$HOME',
      '`id`',
      'a\\b',
      '',
      ';&|<>',
      '*?[x]',
      'new\nline',
      '#hash',
      '~',
    ];
    const out = execFileSync('sh', ['-c', `${shellCommand(['printf', '%s\\0'])} ${shellCommand(argv)}`], {
      encoding: 'utf8',
    });
    expect(out.split('\0').slice(0, -1)).toEqual(argv);
    expect(shellQuote('/usr/bin/node')).toBe('/usr/bin/node');
  });

  it('tmux-quotes backslash, double quote and dollar', () => {
    expect(tmuxQuote('a "b" $c \\d')).toBe('"a \\"b\\" \\$c \\\\d"');
  });

  it('selects the server: FLOTILLA_TMUX_SOCKET over config; a path uses -S, a name -L', () => {
    expect(tmuxSocket('cfg', { FLOTILLA_TMUX_SOCKET: 'env' })).toBe('env');
    expect(tmuxSocket('cfg', {})).toBe('cfg');
    expect(tmuxSocket(null, {})).toBeNull();
    expect(socketArgs('/tmp/s')).toEqual(['-S', '/tmp/s']);
    expect(socketArgs('name')).toEqual(['-L', 'name']);
    expect(socketArgs(null)).toEqual([]);
  });
});
