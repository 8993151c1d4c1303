/**
 * Shell gate defaults (§7; syntax in docs/security-shell.md "Deny-list patterns"), each with what it
 * guards against: a denial names its rule and says why, so the model and the person reading
 * the audit know what was refused. Options are sets (`rm -r /` also matches `rm -rf /` and
 * `rm --recursive --force /`); unquoted `*` and `{a,b}` are globs, quoted ones literal.
 */

const EVERYTHING = 'it deletes or opens up every file of the machine or of the home folder';
const PRIVILEGE = 'it runs a command as another user';
const POWER = 'it powers the machine off, reboots, suspends it or changes its run level';

/** `[pattern, why]`, in the order the gate tries them. */
const RULES: readonly (readonly [string, string])[] = [
  ['rm -r /', EVERYTHING],
  ["rm -r '/*'", EVERYTHING],
  ['rm -r ~', EVERYTHING],
  ["rm -r '~/*'", EVERYTHING],
  ['rm -r $HOME', EVERYTHING],
  ["rm -r '$HOME/*'", EVERYTHING],
  ['sudo', PRIVILEGE],
  ['su', PRIVILEGE],
  ['doas', PRIVILEGE],
  ['pkexec', PRIVILEGE],
  [
    '{sudoedit,sudo-rs,su-rs,run0,opendoas,please,pleaseedit,ksu,gksu,gksudo,kdesu,kdesudo,beesu,lxsudo,lxqt-sudo,calife}',
    PRIVILEGE,
  ],
  ['machinectl {shell,login}', PRIVILEGE],
  ['mkfs*', 'it makes a new filesystem over whatever the device held'],
  [
    '{mke2fs,mke4fs,mkdosfs,mkntfs,mkexfatfs,mkreiserfs,mkswap,mkudffs,jfs_mkfs}',
    'it makes a new filesystem over whatever the device held',
  ],
  ['wipefs -a', 'it erases the filesystem and partition-table signatures of a device'],
  ['wipefs -o', 'it erases a signature of a device'],
  ['blkdiscard', 'it discards every block of a device'],
  ['sgdisk -Z', 'it destroys the partition tables of a disk'],
  ['sgdisk -z', 'it destroys the GPT of a disk'],
  ['sgdisk -o', 'it writes a new, empty partition table over a disk'],
  ['sfdisk --delete', 'it deletes partitions of a disk'],
  ['parted {mklabel,mktable,rm}', 'it writes a new partition table or deletes a partition'],
  [
    'cryptsetup {luksFormat,erase,luksErase}',
    'it formats a device for encryption or erases its keys, and with them the data',
  ],
  ['nvme {format,sanitize}', 'it erases an NVMe drive'],
  ['hdparm --security-erase', 'it erases a whole drive'],
  ['badblocks -w', 'badblocks -w overwrites the whole device with test patterns'],
  [
    'badblocks -n',
    'badblocks -n rewrites every block of the device (restoring it after), and loses data when stopped half-way',
  ],
  ['mdadm --zero-superblock', 'it erases the RAID superblock of a device'],
  ['mdadm --create', 'it writes a new RAID array over its member devices'],
  ['mdadm --build', 'it writes a RAID array without superblocks over its member devices'],
  [
    '{lvremove,vgremove,pvremove}',
    'it removes LVM volumes, volume groups or physical-volume labels, and the data on them',
  ],
  ['zpool {destroy,labelclear}', 'it destroys a ZFS pool or clears the labels of its devices'],
  ['zfs destroy', 'it destroys a ZFS dataset or snapshot and the data in it'],
  [
    'dd of=/dev/{sd,hd,vd,xvd,nvme,mmcblk,disk,rdisk,dm-,md,mapper/,nbd}*',
    'dd writes raw to a block device, over the filesystem on it',
  ],
  [
    '> /dev/{sd,hd,vd,xvd,nvme,mmcblk,disk,rdisk,dm-,md,mapper/,nbd,mem,kmem,port}*',
    'it writes raw to a block device (a disk, partition, RAID or device-mapper volume), over the filesystem on it, or to kernel memory',
  ],
  ['shutdown', POWER],
  ['reboot', POWER],
  ['halt', POWER],
  ['poweroff', POWER],
  ['kexec', POWER],
  [
    'systemctl {poweroff,reboot,halt,kexec,soft-reboot,suspend,hibernate,hybrid-sleep,suspend-then-hibernate,rescue,emergency}',
    POWER,
  ],
  [
    'systemctl {start,isolate,restart,reload-or-restart,try-restart,try-reload-or-restart} {poweroff,reboot,halt,kexec,soft-reboot,rescue,emergency,suspend,hibernate,hybrid-sleep,suspend-then-hibernate,ctrl-alt-del}{,.target}',
    POWER,
  ],
  [
    'loginctl {poweroff,reboot,halt,kexec,soft-reboot,suspend,hibernate,hybrid-sleep,suspend-then-hibernate,terminate-*,kill-*}',
    `${POWER}, or ends sessions`,
  ],
  ['{init,telinit} {0,1,6,s,S,single}', POWER],
  ['{busctl,dbus-send,gdbus,qdbus} *{PowerOff,Reboot,Halt,KExec,SoftReboot,Suspend,Hibernate}', POWER],
  ['> /proc/sysrq-trigger', 'it tells the kernel to reboot, crash or kill processes at once'],
  ['chmod -R 777 /', EVERYTHING],
  ['chown -R /', EVERYTHING],
  ['kill -- -1', 'it kills every process of the user'],
  [':(){ :|:& };:', 'a fork bomb fills the process table until the machine stops answering'],
  ['{curl,wget} | {sh,bash,zsh,dash,ksh}', 'it runs code downloaded from the network'],
  ['git push --force', 'it overwrites shared git history'],
  ['git reset --hard origin*', 'it throws away local commits and changes'],
];

/** `security.deny_commands` by default. */
export const DEFAULT_DENY_COMMANDS: readonly string[] = RULES.map(([pattern]) => pattern);

const WHY = new Map(RULES);

/** What a default deny rule guards against; undefined for a rule a person added. */
export function denyRuleWhy(pattern: string): string | undefined {
  return WHY.get(pattern);
}
