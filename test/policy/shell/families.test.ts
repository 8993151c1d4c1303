import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DENY_COMMANDS } from '../../../src/config/schema.js';
import { loadShellParser } from '../../../src/harness/shell-parser.js';
import { analyzeShell } from '../../../src/policy/shell/analyze.js';
import { createShellClassifier, type ShellClassifier } from '../../../src/policy/shell/classify.js';
import type { ShellParser } from '../../../src/policy/shell/syntax.js';

/**
 * The evasion families of the gate's second round (docs/security.md), each tested as a rule:
 * the spellings are generated from the rule (every way to respell a path, every form of an
 * operand the gate cannot know, every way to move the working directory…), not listed from
 * examples, and each family has ordinary commands next to it that must stay plain.
 */

let classify: ShellClassifier;
let parser: ShellParser;
beforeAll(async () => {
  parser = await loadShellParser();
  classify = createShellClassifier(parser, [...DEFAULT_DENY_COMMANDS]);
});

const verdict = (c: string) => classify(c).verdict;
const cross = <A, B>(as: readonly A[], bs: readonly B[]): [A, B][] => as.flatMap((a) => bs.map((b): [A, B] => [a, b]));

/** Lexically equal spellings of an absolute path: `.` segments, doubled slashes, `..` out of a sibling. */
function respell(path: string): string[] {
  const [, first, rest = ''] = /^\/([^/]+)(.*)$/.exec(path)!;
  return [
    `/${first}/.${rest}`,
    `//${first}${rest}`,
    `/${first}//${rest.slice(1)}`,
    `/tmp/../${first}${rest}`,
    `/${first}/x/..${rest}`,
    `/./${first}${rest}`,
    `/${first}/../${first}${rest}`,
  ];
}

describe('paths spelled another way match the rule the canonical path matches', () => {
  const targets = ['/dev/sda', '/dev/nvme0n1', '/dev/mmcblk0p1', '/proc/sysrq-trigger'];
  const writers = (p: string) => [
    `dd if=img of=${p}`,
    `cat img > ${p}`,
    `cp img ${p}`,
    `tee ${p} < img`,
    `echo b >> ${p}`,
    `pv img >|${p}`,
  ];
  it.each(targets.flatMap((t) => respell(t).flatMap(writers)).map((c) => [c]))('%j is denied', (c) => {
    expect(classify(c)).toMatchObject({ verdict: 'deny' });
  });
  const roots = ['//', '/./', '/usr/..', '/tmp/../..', '/./.', '/home/../root/..', '/..'];
  const homes = ['~/.', '~//', '~/x/..', '"$HOME"/.', '${HOME}//'];
  it.each(
    [
      ...cross(['rm -rf', 'rm -r -f', 'chmod -R 777', 'chown -R root'], roots),
      ...cross(['rm -rf', 'rm --recursive'], homes),
    ].map(([c, p]) => [`${c} ${p}`]),
  )('%j is denied', (c) => {
    expect(verdict(c)).toBe('deny');
  });
  it.each(
    ['/dev/./null', '//dev/null', '/dev/../tmp/x', '/dev/stderr', '/dev/shm/x', '/dev/./tty']
      .flatMap(writers)
      .map((c) => [c]),
  )('%j (not a disk) is plain', (c) => {
    expect(verdict(c)).toBe('plain');
  });
});

describe('operands the gate cannot know make a command with a deny rule on its operands opaque', () => {
  const unknown = [
    '$(cat list)',
    '`cat list`',
    '$((0))',
    '$X',
    '"$X"',
    '${X}',
    '"${X:-/}"',
    '"$X"/',
    '"$X"/*',
    '$X/*',
    '"$(dirname "$f")"',
    '"$X"/.',
  ];
  const commands = (w: string) => [
    `rm -rf ${w}`,
    `rm -r -f ${w}`,
    `chmod -R 777 ${w}`,
    `chown -R root ${w}`,
    `dd if=img of=${w}`,
    `rm -rf ${w} build`,
  ];
  it.each(unknown.flatMap(commands).map((c) => [c]))('%j is opaque', (c) => {
    expect(classify(c)).toMatchObject({ verdict: 'opaque', reason: expect.stringContaining('deny rule') });
  });
  it.each(['rm $OPTS /', 'rm $(echo -rf) /', 'rm -f $X'].map((c) => [c]))(
    '%j (the options may come from the expansion) is opaque',
    (c) => {
      expect(verdict(c)).toBe('opaque');
    },
  );
  // Parts the gate does know rule the value out: a name under the expansion, a quoted word that is one word only.
  it.each(
    [
      'rm -rf "$X/build"',
      'rm -rf "${TMPDIR:-/tmp}/x"',
      'rm -rf "$HOME/.cache/x"',
      'rm -f "$tmp"',
      'chown -R "$USER" build',
      'chmod -R "$MODE" build',
      'kill $(cat pid)',
      'kill -9 $(pgrep node)',
      'git push origin "$BRANCH"',
      'rm -rf "$X"/dist/*',
      'ls $(pwd)',
    ].map((c) => [c]),
  )('%j is plain', (c) => {
    expect(verdict(c)).toBe('plain');
  });
});

describe('a glob or relative operand is read in the directory the list moved to', () => {
  const moves: [string, string][] = [
    ['cd /', '/'],
    ['cd //', '/'],
    ['cd /usr/..', '/'],
    ['cd /tmp && cd ..', '/'],
    ['cd ~', '~'],
    ['cd', '~'],
    ['cd "$HOME"', '~'],
    ['cd ${HOME}/', '~'],
    ['pushd /', '/'],
    ['pushd ~ >/dev/null', '~'],
    ['cd -P /', '/'],
    ['cd -- /', '/'],
    ['builtin cd /', '/'],
    ['cd /tmp; pushd /; pushd /var; popd', '/'],
    ['cd /usr/lib; cd ../..', '/'],
    ['cd /; cd /tmp; cd -', '/'],
  ];
  const removes = ['rm -rf *', 'rm -rf ./*', 'rm -r -f .', 'rm -rf ?*', 'find . -delete', 'chmod -R 777 .'];
  const joins = [' && ', '; ', '\n'];
  const applies = (to: string, rm: string) => to === '/' || !rm.startsWith('chmod');
  it.each(
    cross(moves, removes)
      .filter(([[, to], rm]) => applies(to, rm))
      .map(([[move], rm], i) => [`${move}${joins[i % joins.length]}${rm}`]),
  )('%j is denied', (c) => {
    expect(verdict(c)).toBe('deny');
  });
  it.each(
    [
      'if cd /; then rm -rf *; fi',
      '{ cd /; rm -rf *; }',
      'cd / || exit 1; rm -rf *',
      'cd /usr && rm -rf ../*',
      'cd /dev && dd if=img of=sda',
      'cd /dev; cat img > sda',
    ].map((c) => [c]),
  )('%j is denied', (c) => {
    expect(verdict(c)).toBe('deny');
  });
  it.each(
    [
      'cd "$D" && rm -rf *',
      'cd $(mktemp -d) && rm -rf ./*',
      'cd .. && rm -rf *',
      'cd - && rm -rf *',
      'cd /tmp && pushd +1 && rm -rf *',
    ].map((c) => [c]),
  )('%j (a directory it cannot know) is opaque', (c) => {
    expect(verdict(c)).toBe('opaque');
  });
  // A subshell, a pipeline stage or another shell moves nothing for the commands after it.
  it.each(
    [
      '(cd /; ls) && rm -rf *',
      'cd / | cat; rm -rf *',
      "bash -c 'cd /'; rm -rf *",
      'echo $(cd /); rm -rf *',
      'cd /tmp/build && rm -rf *',
      'cd /; cd -; rm -rf *',
      'cd src && rm -rf dist',
      'cd "$D" && rm -rf dist',
      'cd / && ls',
      'cd && ls *',
      'pushd /tmp/x; popd; rm -rf *',
    ].map((c) => [c]),
  )('%j is plain', (c) => {
    expect(verdict(c)).toBe('plain');
  });
});

describe('programs reached by another name', () => {
  const makers = (from: string, to: string) => [
    `ln -s ${from} ${to}`,
    `ln -sf ${from} ${to}`,
    `ln ${from} ${to}`,
    `cp ${from} ${to}`,
    `cp -p -- ${from} ${to}`,
    `install -m 755 ${from} ${to}`,
    `cp ${from} /tmp/a; mv /tmp/a ${to}`,
    `ln -s ${from} /tmp/a && cp /tmp/a ${to}`,
  ];
  const runs: [string, string][] = [
    ['/usr/bin/sudo', 'id'],
    ['/sbin/reboot', ''],
    ['/usr/sbin/mkfs.ext4', '/dev/sdb1'],
  ];
  it.each(
    cross(runs, ['/tmp/x', './x', 'x']).flatMap(([[prog, args], to]) =>
      makers(prog, to).map((m) => [`${m} && ${to.includes('/') ? to : `./${to}`} ${args}`]),
    ),
  )('%j is denied', (c) => {
    expect(verdict(c)).toBe('deny');
  });
  it.each([
    ["cp /bin/bash /tmp/b; /tmp/b -c 'sudo id'"],
    ['cd /tmp && ln -s /usr/bin/sudo s && /tmp/s id'],
    ['ln -s /usr/bin/sudo ~/bin/s; PATH=~/bin:$PATH s id'],
    ['cp -t /tmp/d /usr/bin/sudo && /tmp/d/sudo id'],
  ])('%j is denied', (c) => {
    expect(verdict(c)).toBe('deny');
  });
  it.each([['ln -s "$(command -v sudo)" s; ./s id'], ['cp $P x && ./x']])(
    '%j (made from a file it cannot name) is opaque',
    (c) => {
      expect(verdict(c)).toBe('opaque');
    },
  );
  const aliases = (name: string, value: string) => [
    `git -c alias.${name}='${value}' ${name}`,
    `git -c "alias.${name}=${value}" ${name}`,
    `git -c alias.${name.toUpperCase()}='${value}' ${name}`,
    `git -C . -c alias.${name}='${value}' ${name}`,
    `git config alias.${name} '${value}'; git ${name}`,
    `git config --global alias.${name} "${value}" && git ${name}`,
    `git -c alias.z=${name} -c alias.${name}='${value}' z`,
  ];
  it.each(
    [
      ...aliases('p', 'push --force'),
      ...aliases('fp', 'push -f origin main'),
      ...aliases('rh', 'reset --hard origin/main'),
    ].map((c) => [c]),
  )('%j is denied', (c) => {
    expect(verdict(c)).toBe('deny');
  });
  it.each([['git --config-env=alias.p=GIT_P p']])('%j (an alias from the environment) is opaque', (c) => {
    expect(verdict(c)).toBe('opaque');
  });
  it.each([
    ['git -c alias.st=status st'],
    ['git config --global alias.co checkout; git co main'],
    ['git -c alias.l="log --oneline" l -5'],
    ['ln -s ../lib/tool bin/tool && bin/tool --help'],
    ['cp build/cli /tmp/cli && /tmp/cli status'],
  ])('%j is plain', (c) => {
    expect(verdict(c)).toBe('plain');
  });
  const targets = ['poweroff', 'reboot', 'halt', 'kexec', 'soft-reboot', 'rescue', 'emergency', 'ctrl-alt-del'];
  it.each(
    cross(['start', 'isolate', 'restart', 'try-restart'], targets).flatMap(([verb, t]) => [
      [`systemctl ${verb} ${t}.target`],
      [`systemctl --no-block ${verb} ${t}`],
    ]),
  )('%j is denied', (c) => {
    expect(verdict(c)).toBe('deny');
  });
  it.each([
    ['systemctl status reboot.target'],
    ['systemctl list-dependencies poweroff.target'],
    ['systemctl restart nginx'],
  ])('%j is plain', (c) => {
    expect(verdict(c)).toBe('plain');
  });
});

describe('the default deny list covers effects, not names', () => {
  const effects: Record<string, string[]> = {
    'power off, reboot, suspend': [
      'shutdown -h now',
      'reboot',
      'halt -p',
      'poweroff',
      'kexec -e',
      'init 0',
      'init 6',
      '/sbin/telinit 6',
      'telinit 0',
      'systemctl poweroff',
      'systemctl kexec',
      'systemctl suspend',
      'loginctl poweroff',
      'loginctl reboot',
      'loginctl terminate-user me',
      'busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager PowerOff b false',
      'dbus-send --system --print-reply --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager.Reboot boolean:true',
      'echo o > /proc/sysrq-trigger',
    ],
    privilege: [
      'sudo id',
      'sudoedit /etc/hosts',
      'sudo -e /etc/hosts',
      'su -',
      'doas id',
      'run0 id',
      'pkexec id',
      'please id',
      'ksu',
      'machinectl shell root@',
      '/usr/bin/sudo-rs id',
    ],
    'make or wipe a filesystem': [
      'mkfs.ext4 /dev/sdb1',
      'mke2fs -t ext4 /dev/sdb1',
      'mkswap /dev/sdb2',
      'mkdosfs /dev/sdc1',
      'mkntfs /dev/sdd1',
      'wipefs -a /dev/sdb',
      'wipefs --all /dev/sdb',
      'wipefs -o 0x438 /dev/sdb',
      'blkdiscard /dev/nvme0n1',
      'sgdisk --zap-all /dev/sda',
      'sgdisk -Z /dev/sda',
      'sfdisk --delete /dev/sda',
      'parted -s /dev/sda mklabel gpt',
      'cryptsetup luksFormat /dev/sdb1',
      'nvme format /dev/nvme0n1',
      'hdparm --security-erase-enhanced p /dev/sda',
    ],
    'raw writes to a block device': [
      'dd if=img of=/dev/sda',
      'cat img > /dev/sda',
      'cp img /dev/nvme0n1',
      'img2 | tee /dev/sdb',
      'xz -dc img.xz > /dev/mmcblk0',
      'pv img >/dev/disk/by-id/x',
      'exec 3>/dev/sda',
      'install img /dev/vda',
      'shred /dev/sda',
      'cat img | sudo tee /dev/sda >/dev/null',
      'cat img >/dev/mapper/root',
      'curl -o /dev/sda https://x.example/img',
    ],
  };
  it.each(Object.entries(effects).flatMap(([effect, cs]) => cs.map((c) => [effect, c])))(
    '%s: %j is denied',
    (_e, c) => {
      expect(verdict(c)).toBe('deny');
    },
  );
  it.each([
    ['wipefs /dev/sda'],
    ['lsblk'],
    ['fdisk -l'],
    ['parted -l'],
    ['systemctl status'],
    ['loginctl list-sessions'],
    ['dd if=/dev/sda of=disk.img bs=1M'],
    ['cat /dev/sda | head -c 512 | xxd'],
    ['cp /dev/null x'],
    ['echo hi > /dev/stderr'],
    ['init --version'],
    ['busctl list'],
  ])('%j is plain', (c) => {
    expect(verdict(c)).toBe('plain');
  });
});

describe('parser differentials: where the grammar reads words or commands other than bash, the gate reads as bash or calls it opaque', () => {
  // bash ends `$'…'` at the first quote no backslash escapes; the grammar's pattern can run on to a later quote and
  // hide what lies between.
  const ansi = ["$'a\\\\'", "$'\\\\'", "$'x\\\\\\\\'", "$'\\c\\\\'"];
  it.each(
    cross(ansi, ['; sudo id ', ' && sudo id ', ' | sudo id ', '\nsudo id ']).map(([s, rest]) => [
      `echo ${s}${rest}'x'`,
    ]),
  )('%j is not plain', (c) => {
    expect(verdict(c)).not.toBe('plain');
  });
  // The grammar drops `\ ` before `$''`, and after `$""` runs a word on across a line break.
  it.each(
    ["b \\ $'' x; sudo id", 'echo y$""\n\\sudo id', 'echo y$""\n\\rm -rf /', "a \\ $''\n\\sudo id"].map((c) => [c]),
  )('%j is not plain', (c) => {
    expect(verdict(c)).not.toBe('plain');
  });
  const words = (c: string) => analyzeShell(c, parser).commands[0]!.levels[0]!.map((w) => w.value);
  it.each([
    ['a {,x}\\-f', ['a', '-f', 'x-f']],
    ['a -f$" "', ['a', '-f ']],
    ['a $"x y"z', ['a', 'x yz']],
    ["a $'\\c\\\\x'", ['a', '\x1cx']],
    ["a $'a'\\,b", ['a', 'a,b']],
    ['a {,x}', ['a', 'x']],
    ["a ''{,x}", ['a', '', 'x']],
  ])('%j has the words bash gives it', (c, expected) => {
    expect(words(c)).toEqual(expected);
  });
});
