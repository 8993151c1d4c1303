import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parseTmuxEnv } from './current.js';

/**
 * Where this user's tmux servers listen (docs/security.md, "tmux is out of reach"): a tool
 * command that can connect to one can type into any pane, approve its own calls and run
 * anything on the host with `run-shell`. The sandbox hides each socket's directory; this
 * finds them wherever they are (`-L`, `-S`, `TMUX_TMPDIR`), from tmux itself rather than by
 * assuming they sit under /tmp:
 *
 * - every live tmux server process of this user, and the unix sockets it listens on
 *   (its fds, matched to paths through /proc/net/unix);
 * - the server in `$TMUX` (the harness's own pane);
 * - the directory tmux uses for `-L` names (`$TMUX_TMPDIR` or /tmp, then `tmux-<uid>`), where
 *   a server started later would listen.
 */
export function tmuxSocketPaths(env: NodeJS.ProcessEnv = process.env): { sockets: string[]; dirs: string[] } {
  const sockets = new Set<string>();
  const own = parseTmuxEnv(env);
  if (own) sockets.add(own.socketPath);
  for (const path of liveServerSockets()) sockets.add(path);
  const uid = process.getuid?.() ?? 0;
  const dirs = new Set<string>([join(env.TMUX_TMPDIR || '/tmp', `tmux-${uid}`), join('/tmp', `tmux-${uid}`)]);
  return { sockets: [...sockets], dirs: [...dirs] };
}

/** Listening unix socket paths by inode (`/proc/net/unix`: Num RefCount Protocol Flags Type St Inode Path). */
function unixSocketsByInode(): Map<string, string> {
  const out = new Map<string, string>();
  let text: string;
  try {
    text = readFileSync('/proc/net/unix', 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    const path = f.slice(7).join(' ');
    // Abstract names start with '@' and have no directory to hide.
    if (f[6] && path.startsWith('/')) out.set(f[6], path);
  }
  return out;
}

function liveServerSockets(): string[] {
  if (process.platform !== 'linux') return [];
  const uid = process.getuid?.();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const servers = pids.filter((pid) => {
    try {
      // tmux names its server process "tmux: server" (prctl), whatever the binary is called.
      if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('tmux: server')) return false;
      const line = /^Uid:\s+\d+\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return uid === undefined || Number(line?.[1]) === uid;
    } catch {
      return false;
    }
  });
  if (servers.length === 0) return [];
  const byInode = unixSocketsByInode();
  const out: string[] = [];
  for (const pid of servers) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        const path = inode && byInode.get(inode);
        if (path) out.push(path);
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return out;
}
