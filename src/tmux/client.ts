import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { FlotillaError, isErrno } from '../errors.js';
import { parseTmuxVersion, type TmuxVersion } from './version.js';

/**
 * A typed wrapper over the tmux CLI (§5.4). Every call is an argv (never a shell string);
 * everything is addressed by tmux ids (`$1` session, `@2` window, `%3` pane). A `socket`
 * selects the server: a name → `-L name`, an absolute path → `-S path`; null → tmux's own
 * choice (`$TMUX`, else the default server).
 */

export interface PaneRef {
  sessionId: string;
  windowId: string;
  paneId: string;
  panePid: number;
}

export interface PaneInfo extends PaneRef {
  dead: boolean;
  /** Exit status of a dead pane's process, when tmux knows it. */
  deadStatus: number | null;
  windowName: string;
}

interface SpawnCommon {
  /** The program and its arguments; run directly, not through a shell. */
  command: readonly string[];
  cwd?: string;
  /** Passed with `-e NAME=VALUE`. */
  env?: Record<string, string>;
  /** Keep the pane (dead, readable) after its process exits. */
  remainOnExit?: boolean;
  /** A tmux command string run when the pane's process dies (build it with `runShellCommand`). */
  paneDiedHook?: string;
}

export interface NewSessionOptions extends SpawnCommon {
  name: string;
  windowName?: string;
  /** tmux commands run in the same call once the session is made (each is tried again alone should one fail). */
  then?: readonly (readonly string[])[];
}

export interface NewWindowOptions extends SpawnCommon {
  /** The session (id or `=name`) the window opens in. */
  target: string;
  /** Window name; required with remainOnExit/paneDiedHook, which address the window by it. */
  name: string;
  /** Leave the current window selected (default true). */
  detached?: boolean;
}

const PANE_FORMAT = '#{session_id} #{window_id} #{pane_id} #{pane_pid}';
const LIST_FORMAT = '#{session_id} #{window_id} #{pane_id} #{pane_pid} #{pane_dead} #{pane_dead_status} #{window_name}';

/** The tmux server selection arguments for a socket name or path. */
export function socketArgs(socket: string | null | undefined): string[] {
  if (!socket) return [];
  return isAbsolute(socket) ? ['-S', socket] : ['-L', socket];
}

/** The socket to use: `FLOTILLA_TMUX_SOCKET`, else config `tmux.socket`, else null (tmux decides). */
export function tmuxSocket(
  configSocket: string | null | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  return env.FLOTILLA_TMUX_SOCKET || configSocket || null;
}

function parsePaneRef(line: string): PaneRef {
  const [sessionId, windowId, paneId, pid] = line.trim().split(' ');
  const panePid = Number(pid);
  if (
    !sessionId?.startsWith('$') ||
    !windowId?.startsWith('@') ||
    !paneId?.startsWith('%') ||
    !Number.isInteger(panePid)
  ) {
    throw new FlotillaError(
      `tmux printed '${line.trim()}' where pane ids were expected — check 'tmux -V' (Flotilla needs tmux ≥ 3.2)`,
    );
  }
  return { sessionId, windowId, paneId, panePid };
}

/** Parses one `LIST_FORMAT` line. */
export function parsePaneInfo(line: string): PaneInfo {
  const parts = line.split(' ');
  const ref = parsePaneRef(parts.slice(0, 4).join(' '));
  const status = parts[5] ?? '';
  return {
    ...ref,
    dead: parts[4] === '1',
    deadStatus: status === '' ? null : Number(status),
    windowName: parts.slice(6).join(' '),
  };
}

/**
 * Model provider keys that never reach a tmux server Flotilla starts: a server keeps the
 * environment of the client that started it as its global environment, which every pane
 * inherits and `tmux show-environment -g` prints (docs/security-shell.md "Keys on request only";
 * harnesses get theirs through a file, spawn/harness-keys.ts).
 */
export const SERVER_HIDDEN_VARS: readonly string[] = [
  'ANTHROPIC_API_KEY',
  'OPENAI_API_KEY',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'CODEX_API_KEY',
];

export class Tmux {
  readonly socket: string | null;
  private readonly bin: string;
  private readonly env: NodeJS.ProcessEnv | undefined;

  /** `hideEnv`: more variables to keep from a server this client may start (configured `api_key_env`s). */
  constructor(opts: { socket?: string | null; bin?: string; hideEnv?: readonly string[] } = {}) {
    this.socket = opts.socket ?? null;
    this.bin = opts.bin ?? 'tmux';
    const hidden = [...SERVER_HIDDEN_VARS, ...(opts.hideEnv ?? [])].filter((name) => process.env[name] !== undefined);
    if (hidden.length) {
      this.env = { ...process.env };
      for (const name of hidden) delete this.env[name];
    }
  }

  /** Runs `tmux <args>`; resolves stdout, rejects with a one-line FlotillaError. */
  run(args: readonly string[]): Promise<string> {
    return this.exec(args).then((r) => {
      if (r.code !== 0) throw this.failure(args, r.stderr);
      return r.stdout;
    });
  }

  /** Runs `tmux <args>` and reports the exit code instead of throwing on failure. */
  exec(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      execFile(
        this.bin,
        [...socketArgs(this.socket), ...args],
        { encoding: 'utf8', ...(this.env ? { env: this.env } : {}) },
        (err, stdout, stderr) => {
          if (err && isErrno(err, 'ENOENT')) {
            reject(
              new FlotillaError(
                `tmux is not installed or not on PATH — install tmux ≥ 3.2, or spawn with --background`,
                { code: 'tmux-missing', cause: err },
              ),
            );
            return;
          }
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  private failure(args: readonly string[], stderr: string): FlotillaError {
    const why = stderr.trim().split('\n')[0] || 'failed';
    const where = this.socket ? ` (server ${this.socket})` : '';
    return new FlotillaError(
      `tmux ${args[0] ?? ''} failed${where}: ${why} — check that the tmux server is running and the target exists`,
      { code: 'tmux' },
    );
  }

  async version(): Promise<TmuxVersion | null> {
    try {
      const r = await this.exec(['-V']);
      return r.code === 0 ? parseTmuxVersion(r.stdout) : null;
    } catch {
      return null;
    }
  }

  /** True when a session with exactly this name (or id) exists; false also when no server runs. */
  async hasSession(name: string): Promise<boolean> {
    const target = name.startsWith('$') ? name : `=${name}`;
    return (await this.exec(['has-session', '-t', target])).code === 0;
  }

  /** Opens a detached session running `command`; returns its ids. */
  newSession(opts: NewSessionOptions): Promise<PaneRef> {
    const args = ['new-session', '-d', '-P', '-F', PANE_FORMAT, '-s', opts.name];
    if (opts.windowName) args.push('-n', opts.windowName);
    return this.open(args, opts, `=${opts.name}:`, opts.then);
  }

  /** Opens a window in a session running `command`; returns its ids. */
  newWindow(opts: NewWindowOptions): Promise<PaneRef> {
    const args = ['new-window', '-P', '-F', PANE_FORMAT, '-t', `${opts.target}:`, '-n', opts.name];
    if (opts.detached !== false) args.push('-d');
    return this.open(args, opts, `${opts.target}:=${opts.name}`);
  }

  /**
   * Creates the pane and, in the same tmux invocation, sets remain-on-exit and the
   * pane-died hook. One invocation runs as one command queue in the server, so a process
   * that exits at once still dies with the option and the hook in place. `-d` leaves the
   * new pane out of the queue's current target, so the window is addressed by name.
   */
  private async open(
    args: string[],
    opts: SpawnCommon,
    windowTarget: string,
    then: readonly (readonly string[])[] = [],
  ): Promise<PaneRef> {
    if (opts.cwd) args.push('-c', opts.cwd);
    for (const [k, v] of Object.entries(opts.env ?? {})) args.push('-e', `${k}=${v}`);
    args.push('--', ...opts.command);
    const after: (readonly string[])[] = [];
    if (opts.remainOnExit) after.push(['set-option', '-p', '-t', windowTarget, 'remain-on-exit', 'on']);
    if (opts.paneDiedHook) after.push(['set-hook', '-p', '-t', windowTarget, 'pane-died', opts.paneDiedHook]);
    const chained = [...after, ...then].flatMap((cmd) => [';', ...cmd]);
    const r = await this.exec([...args, ...chained]);
    const first = r.stdout.split('\n').find((l) => l.trim() !== '');
    if (!first) throw this.failure(args, r.stderr);
    const ref = parsePaneRef(first);
    if (r.code !== 0) {
      // The pane exists but the window name was not unique: set the rest by pane id.
      if (opts.remainOnExit) await this.setPaneOption(ref.paneId, 'remain-on-exit', 'on');
      if (opts.paneDiedHook) await this.setHook(ref.paneId, 'pane-died', opts.paneDiedHook);
      for (const cmd of then) await this.exec(cmd);
    }
    return ref;
  }

  /**
   * True only when no server can be listening: its socket file is not there. A spawn into a fleet whose tmux server
   * is not running yet then opens the session at once rather than first trying a window and asking for the session,
   * two tmux calls that could only fail (§14). False whenever unsure (no socket named and $TMUX set: tmux chooses).
   */
  serverAbsent(): boolean {
    if (!this.socket && process.env.TMUX) return false;
    const path =
      this.socket && isAbsolute(this.socket)
        ? this.socket
        : join(process.env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid?.() ?? 0}`, this.socket ?? 'default');
    return !existsSync(path);
  }

  /** A per-pane option (`set-option -p`, tmux ≥ 3.0). */
  async setPaneOption(pane: string, name: string, value: string): Promise<void> {
    await this.run(['set-option', '-p', '-t', pane, name, value]);
  }

  /** A hook on one pane (default), window, or session. `command` is a tmux command string (see `runShellCommand`). */
  async setHook(
    target: string,
    hook: string,
    command: string,
    scope: 'pane' | 'window' | 'session' = 'pane',
  ): Promise<void> {
    const flag = scope === 'pane' ? ['-p'] : scope === 'window' ? ['-w'] : [];
    await this.run(['set-hook', ...flag, '-t', target, hook, command]);
  }

  async killPane(pane: string): Promise<void> {
    await this.run(['kill-pane', '-t', pane]);
  }

  async killWindow(window: string): Promise<void> {
    await this.run(['kill-window', '-t', window]);
  }

  async killSession(session: string): Promise<void> {
    await this.run(['kill-session', '-t', session]);
  }

  async selectWindow(window: string): Promise<void> {
    await this.run(['select-window', '-t', window]);
  }

  /** Moves the calling client (inside tmux) to `target`. */
  async switchClient(target: string): Promise<void> {
    await this.run(['switch-client', '-t', target]);
  }

  /** Attaches this terminal to a session (outside tmux); resolves the exit code when the person detaches. */
  attachSession(target: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.bin, [...socketArgs(this.socket), 'attach-session', '-t', target], {
        stdio: 'inherit',
        ...(this.env ? { env: this.env } : {}),
      });
      child.once('error', reject);
      child.once('exit', (code) => resolve(code ?? 1));
    });
  }

  /**
   * The pane's text. `start`: first line (negative = back into scrollback), or 'history'
   * for all of it — tmux scrolls a dead pane's last screen up when it prints "Pane is dead".
   */
  capturePane(pane: string, opts: { start?: number | 'history' } = {}): Promise<string> {
    const args = ['capture-pane', '-p', '-J', '-t', pane];
    if (opts.start !== undefined) args.push('-S', opts.start === 'history' ? '-' : String(opts.start));
    return this.run(args);
  }

  /** Types into a pane: `literal` sends the text as is (`-l`), otherwise the words are key names (`Enter`, `C-c`). */
  async sendKeys(pane: string, keys: readonly string[], opts: { literal?: boolean } = {}): Promise<void> {
    await this.run(['send-keys', '-t', pane, ...(opts.literal ? ['-l'] : []), '--', ...keys]);
  }

  /** Expands a format against a target (`display-message -p`). */
  async display(format: string, target?: string): Promise<string> {
    return (await this.run(['display-message', '-p', ...(target ? ['-t', target] : []), format])).trimEnd();
  }

  /** Panes of a session, or of the whole server; no server → []. */
  async listPanes(session?: string): Promise<PaneInfo[]> {
    const scope = session ? ['-s', '-t', session] : ['-a'];
    const r = await this.exec(['list-panes', ...scope, '-F', LIST_FORMAT]);
    if (r.code !== 0) {
      if (!session && /no server running|error connecting/i.test(r.stderr)) return [];
      throw this.failure(['list-panes'], r.stderr);
    }
    return r.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map(parsePaneInfo);
  }
}
