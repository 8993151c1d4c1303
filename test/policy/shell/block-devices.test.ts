import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DENY_COMMANDS } from '../../../src/config/schema.js';
import { denyRuleWhy } from '../../../src/config/deny-commands.js';
import { loadShellParser } from '../../../src/harness/shell-parser.js';
import { decideToolCall } from '../../../src/policy/decide.js';
import { createShellClassifier, type ShellClassifier } from '../../../src/policy/shell/classify.js';

/**
 * docs/security-shell.md "Deny-list patterns", block devices: a write to a disk is denied whatever
 * program makes it (ddrescue, badblocks -w, rsync/scp/cp to a device,
 * `openssl enc -out`, mdadm, the partition editors, LVM and ZFS removals, wipefs, mkfs, and
 * `of=`, `>`, `tee` into /dev/sd*, /dev/nvme*, /dev/vd*, /dev/mapper/*), each denial naming
 * its rule and why; reading a disk, listing it, and writing anything else stay plain.
 */

let classify: ShellClassifier;
beforeAll(async () => {
  classify = createShellClassifier(await loadShellParser(), [...DEFAULT_DENY_COMMANDS]);
});

const WRITE = '> /dev/{sd,hd,vd,xvd,nvme,mmcblk,disk,rdisk,dm-,md,mapper/,nbd,mem,kmem,port}*';
const DD = 'dd of=/dev/{sd,hd,vd,xvd,nvme,mmcblk,disk,rdisk,dm-,md,mapper/,nbd}*';

/** [command, the rule that must deny it]. */
const DENIED: [string, string][] = [
  // The issue's list, as written.
  ['ddrescue img /dev/sda', WRITE],
  ['badblocks -w /dev/sdb', 'badblocks -w'],
  ['rsync img /dev/nvme0n1', WRITE],
  ['openssl enc -out /dev/sda', WRITE],
  ['mdadm --zero-superblock /dev/sdb', 'mdadm --zero-superblock'],
  ['fdisk /dev/sda', WRITE],
  ['lvremove vg/lv', '{lvremove,vgremove,pvremove}'],
  ['zpool destroy tank', 'zpool {destroy,labelclear}'],
  // Other spellings of the same programs.
  ['ddrescue -f -n /dev/sda /dev/sdb rescue.map', WRITE],
  ['ddrescue --force --size=1G img /dev/vdb map', WRITE],
  ['badblocks -wsv /dev/sdb', 'badblocks -w'],
  ['badblocks -b 4096 -w /dev/nvme0n1', 'badblocks -w'],
  ['badblocks -n /dev/sdb', 'badblocks -n'],
  ['rsync -av --inplace img /dev/sdc', WRITE],
  ['rsync --exclude x img root@host:/dev/sda', WRITE],
  ['scp img /dev/sda', WRITE],
  ['scp -P 2222 img root@host:/dev/nvme0n1', WRITE],
  ['cp img /dev/vda', WRITE],
  ['cp -- img /dev/mapper/root', WRITE],
  ['openssl enc -aes-256-cbc -in img -out /dev/mapper/vg-data', WRITE],
  ['openssl enc -d -in img.enc --out=/dev/sdb', WRITE],
  ['gzip -dc img.gz --output /dev/sda', WRITE],
  ['xz -dc img.xz | pv -o /dev/sdd', WRITE],
  ['partclone.ext4 -r -s img -o /dev/sda1', WRITE],
  ['mdadm --zero /dev/sdb', 'mdadm --zero-superblock'],
  ['mdadm --misc --zero-superblock /dev/sdb1', 'mdadm --zero-superblock'],
  ['mdadm --create /dev/md0 --level=1 --raid-devices=2 /dev/sda /dev/sdb', 'mdadm --create'],
  ['mdadm -C /dev/md0 -l 1 -n 2 /dev/sda /dev/sdb', 'mdadm --create'],
  ['mdadm --build /dev/md0 --level=0 -n 2 /dev/sda /dev/sdb', 'mdadm --build'],
  ['fdisk /dev/nvme0n1', WRITE],
  ['sfdisk /dev/sda < table.txt', WRITE],
  ['gdisk /dev/sda', WRITE],
  ['cgdisk /dev/sda', WRITE],
  ['cfdisk /dev/vda', WRITE],
  ['sgdisk -n 1:0:0 /dev/sda', WRITE],
  ['sgdisk -p -n 1:0:0 /dev/sda', WRITE],
  ['sgdisk --zap-all /dev/sda', 'sgdisk -Z'],
  ['sfdisk --delete /dev/sda 1', 'sfdisk --delete'],
  ['parted /dev/sda', WRITE],
  ['parted -s /dev/sda mkpart primary ext4 0% 100%', WRITE],
  ['parted -s -a optimal /dev/nvme0n1 resizepart 1 100%', WRITE],
  ['parted /dev/sda mklabel gpt', 'parted {mklabel,mktable,rm}'],
  ['vgremove vg', '{lvremove,vgremove,pvremove}'],
  ['pvremove /dev/sdb', '{lvremove,vgremove,pvremove}'],
  ['lvremove -f vg/lv', '{lvremove,vgremove,pvremove}'],
  ['zpool destroy -f tank', 'zpool {destroy,labelclear}'],
  ['zpool labelclear /dev/sdb', 'zpool {destroy,labelclear}'],
  ['zfs destroy tank/home', 'zfs destroy'],
  ['zfs destroy -r tank@snap', 'zfs destroy'],
  ['wipefs -a /dev/sda', 'wipefs -a'],
  ['wipefs --all /dev/nvme0n1', 'wipefs -a'],
  ['mkfs.ext4 /dev/sda1', 'mkfs*'],
  ['mkfs.xfs -f /dev/mapper/vg-data', 'mkfs*'],
  // `of=`, `>`, `tee` into each family of device names.
  ['dd if=img of=/dev/sda bs=4M', DD],
  ['dd if=img of=/dev/nvme0n1', DD],
  ['dd if=img of=/dev/vda', DD],
  ['dd if=img of=/dev/mapper/root', DD],
  ['dcfldd if=img of=/dev/sdb', WRITE],
  ['cat img > /dev/sda', WRITE],
  ['cat img >> /dev/nvme0n1p2', WRITE],
  ['pv img > /dev/vdb', WRITE],
  ['cat img > /dev/mapper/luks-1', WRITE],
  ['cat img | tee /dev/sda', WRITE],
  ['tee /dev/nvme0n1 < img', WRITE],
  ['cat img | tee -a /dev/vdc > /dev/null', WRITE],
  ['tee /dev/mapper/root < img', WRITE],
  ['sort -o /dev/sda f', WRITE],
  ['curl -o /dev/sda https://x.example/img', WRITE],
];

/** Near misses: reads and listings of a disk, writes elsewhere, the same programs on files. */
const ALLOWED: string[] = [
  'cat /dev/null',
  '> /dev/null',
  'echo x > /dev/null',
  'cmd 2> /dev/null',
  'tee /dev/null < f',
  'cat f | tee /dev/stderr',
  'rsync a b',
  'rsync -av src/ host:/srv/dst/',
  'scp a host:/tmp/',
  'scp host:/dev/sda img',
  'cp /dev/null empty.txt',
  'ddrescue /dev/sda disk.img disk.map',
  'ddrescue -b 4096 /dev/sda img map',
  'ddrescue img copy.img',
  'badblocks /dev/sdb',
  'badblocks -sv /dev/sdb',
  'openssl enc -aes-256-cbc -in /dev/sda -out disk.enc',
  'openssl rand -out key.bin 32',
  'gcc -o app main.c',
  'sort -o sorted.txt f',
  'mdadm --detail /dev/md0',
  'mdadm --examine /dev/sda1',
  'mdadm --assemble --scan',
  'fdisk -l',
  'fdisk -l /dev/sda',
  'fdisk --list /dev/nvme0n1',
  'fdisk disk.img',
  'sfdisk -d /dev/sda > table.txt',
  'sfdisk -l /dev/sda',
  'gdisk -l /dev/sda',
  'sgdisk -p /dev/sda',
  'sgdisk --print /dev/nvme0n1',
  'sgdisk -b table.bak /dev/sda',
  'cfdisk -r /dev/sda',
  'parted -l',
  'parted /dev/sda print',
  'parted -s /dev/sda unit s print free',
  'lvs',
  'lvdisplay vg/lv',
  'vgs',
  'pvs',
  'zpool status',
  'zpool list',
  'zfs list -t snapshot',
  'zfs snapshot tank@now',
  'wipefs /dev/sda',
  'lsblk -o NAME,SIZE /dev/sda',
  'blkid -o value /dev/sda1',
  'ls -o /dev/sda',
  'grep -o foo /dev/sda',
  'od -o /dev/sda',
  'dd if=/dev/sda of=disk.img bs=1M count=10',
  'dd if=/dev/zero of=./disk.img bs=1M count=10',
  'mount -o ro /dev/sda1 /mnt',
  'hexdump -C /dev/sda',
  'smartctl -a /dev/sda',
  'echo "dd of=/dev/sda" > notes.txt',
  "grep -rn 'fdisk /dev/sda' docs",
  'curl -o out.json https://x.example',
];

describe('block-device writes by any program are denied, naming the rule and why', () => {
  it.each(DENIED)('%j is denied by `%s`', (command, rule) => {
    const v = classify(command);
    expect(v, JSON.stringify(v)).toMatchObject({ verdict: 'deny', rule, why: denyRuleWhy(rule) });
    expect(v.why).toBeTruthy();
    const d = decideToolCall({
      tool: 'shell',
      toolClass: 'exec',
      policy: { tools: ['shell'], withheld: {} },
      mode: 'bypass_permissions',
      canAsk: false,
      shell: v,
    });
    expect(d).toMatchObject({ decision: 'deny', rule: `deny_commands:${rule}` });
    expect(d.reason).toContain(`deny-list rule \`${rule}\``);
    expect(d.reason).toContain(v.why!);
  });
});

describe('reading or listing a disk, and writing anything but a disk, stay plain', () => {
  it.each(ALLOWED.map((c) => [c]))('%j is plain', (command) => {
    expect(classify(command)).toEqual({ verdict: 'plain' });
  });
});

describe('every default rule says what it guards against; a rule a person adds has no reason to give', () => {
  it('each default has a reason', () => {
    expect(DEFAULT_DENY_COMMANDS.filter((p) => !denyRuleWhy(p))).toEqual([]);
  });
  it("a person's own rule denies with its pattern alone", async () => {
    const own = createShellClassifier(await loadShellParser(), ['cargo publish']);
    expect(own('cargo publish --dry-run')).toEqual({
      verdict: 'deny',
      rule: 'cargo publish',
      command: 'cargo publish --dry-run',
    });
  });
});
