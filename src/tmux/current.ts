import { Tmux } from './client.js';

/**
 * Where the caller sits when it runs inside tmux (§5.4: a spawn from inside tmux opens a
 * window in the caller's own session, on the caller's own server). `$TMUX` is
 * `<socket path>,<server pid>,<session index>`; `$TMUX_PANE` is the caller's pane id.
 */
export interface TmuxEnv {
  socketPath: string;
  serverPid: number;
  paneId: string | null;
}

export interface CurrentTmux extends TmuxEnv {
  /** The caller's session id (`$3`), asked of its server. */
  sessionId: string;
}

/**
 * Parses `$TMUX`; null outside tmux or when malformed. The socket path may hold commas, so fields are taken from the
 * right.
 */
export function parseTmuxEnv(env: NodeJS.ProcessEnv = process.env): TmuxEnv | null {
  const value = env.TMUX;
  if (!value) return null;
  const parts = value.split(',');
  if (parts.length < 3) return null;
  const serverPid = Number(parts.at(-2));
  const socketPath = parts.slice(0, -2).join(',');
  if (!socketPath || !Number.isInteger(serverPid)) return null;
  const pane = env.TMUX_PANE;
  return { socketPath, serverPid, paneId: pane && pane.startsWith('%') ? pane : null };
}

/** The caller's tmux server and session, or null outside tmux (or when that server is gone). */
export async function currentTmux(env: NodeJS.ProcessEnv = process.env): Promise<CurrentTmux | null> {
  const parsed = parseTmuxEnv(env);
  if (!parsed) return null;
  const tmux = new Tmux({ socket: parsed.socketPath });
  try {
    // With the pane as target the answer is the caller's session, not the last-used one.
    const sessionId = await tmux.display('#{session_id}', parsed.paneId ?? undefined);
    return sessionId.startsWith('$') ? { ...parsed, sessionId } : null;
  } catch {
    return null;
  }
}
