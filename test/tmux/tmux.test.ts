import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Tmux } from '../../src/tmux/client.js';
import { currentTmux, parseTmuxEnv } from '../../src/tmux/current.js';
import { runShellCommand, tmuxFormat } from '../../src/tmux/quote.js';
import { tempDir } from '../helpers/fleet.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';

const RECORD_ARGS = fileURLToPath(new URL('../fixtures/fleet/record-args.mjs', import.meta.url));
const LIVE = [process.execPath, '-e', 'setInterval(() => {}, 1000)'];

let server: TmuxServer | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await server?.kill();
  server = undefined;
  for (const c of cleanups.splice(0)) c();
});

function setup(): { server: TmuxServer; tmux: Tmux; dir: string } {
  server = tmuxServer();
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  return { server, tmux: new Tmux({ socket: server.socket }), dir };
}

describe('tmux client on a private server', () => {
  it('opens a detached session and a window; list-panes confirms the returned ids', async () => {
    const { tmux, dir } = setup();
    expect(await tmux.hasSession('fleet-x')).toBe(false);
    const s = await tmux.newSession({ name: 'fleet-x', windowName: 'dashboard', cwd: dir, command: LIVE });
    expect(s.sessionId).toMatch(/^\$\d+$/);
    expect(await tmux.hasSession('fleet-x')).toBe(true);
    expect(await tmux.hasSession('fleet')).toBe(false); // exact names, not prefixes
    const w = await tmux.newWindow({
      target: s.sessionId,
      name: 'worker-abc123',
      cwd: dir,
      command: LIVE,
      env: { FLOTILLA_AGENT_ID: 'worker-abc123' },
    });
    expect(w.sessionId).toBe(s.sessionId);
    const panes = await tmux.listPanes(s.sessionId);
    expect(panes.map((p) => [p.windowId, p.paneId, p.panePid, p.windowName, p.dead])).toEqual([
      [s.windowId, s.paneId, s.panePid, 'dashboard', false],
      [w.windowId, w.paneId, w.panePid, 'worker-abc123', false],
    ]);
    // The pane runs our argv directly (no shell in between) in the asked cwd.
    // Right after the fork the pane process is still tmux until it execs our argv.
    await eventually(
      () => readFileSync(`/proc/${w.panePid}/cmdline`, 'utf8').split('\0')[0] === process.execPath,
      5_000,
      'the pane to exec node',
    );
    expect(await tmux.display('#{pane_current_path}', w.paneId)).toBe(dir);
    // Detached: the dashboard stays the current window.
    expect(await tmux.display('#{window_id}', s.sessionId)).toBe(s.windowId);
    await tmux.killWindow(w.windowId);
    expect((await tmux.listPanes(s.sessionId)).map((p) => p.paneId)).toEqual([s.paneId]);
  });

  it('passes env with -e and argv words verbatim; remain-on-exit keeps the dead pane readable', async () => {
    const { server, tmux } = setup();
    const s = await tmux.newSession({ name: 'fleet-y', command: LIVE });
    const script = 'console.log("env=" + process.env.FOO); console.log("arg=" + process.argv[1]); process.exit(3)';
    const w = await tmux.newWindow({
      target: s.sessionId,
      name: 'oneshot-1',
      command: [process.execPath, '-e', script, `it's "quoted" $HOME; #x`],
      env: { FOO: 'a b$c' },
      remainOnExit: true,
    });
    // Dead and reaped (status known); tmux with libutempter may need a nudge (github.com/tmux/tmux/issues/311).
    const dead = await eventually(
      async () => {
        await server.nudge();
        return (await tmux.listPanes()).find((p) => p.paneId === w.paneId && p.dead && p.deadStatus !== null);
      },
      15_000,
      'dead pane',
    );
    expect(dead.deadStatus).toBe(3);
    const text = await tmux.capturePane(w.paneId, { start: 'history' });
    expect(text).toContain('env=a b$c');
    expect(text).toContain(`arg=it's "quoted" $HOME; #x`);
  });

  it('runs the pane-died hook with each argument intact and the dead pane id expanded', async () => {
    const { server, tmux, dir } = setup();
    const s = await tmux.newSession({ name: 'fleet-z', command: LIVE });
    const out = join(dir, 'hook out.json');
    const tricky = `a 'b' "c" $HOME \\ ; #{pane_id} ## ~ ${'`x`'}`;
    const hook = runShellCommand([process.execPath, RECORD_ARGS, out, tricky, '', tmuxFormat('pane_id')]);
    const w = await tmux.newWindow({
      target: s.sessionId,
      name: 'dies-fast',
      // Exits at once (a single-threaded process: see paneArgv): the option and the hook must already be in place.
      command: ['sh', '-c', 'exit 0'],
      remainOnExit: true,
      paneDiedHook: hook,
    });
    // tmux with libutempter can miss the exit of a pane's process (github.com/tmux/tmux/issues/311): nudge it.
    await eventually(
      async () => {
        await server.nudge();
        return existsSync(out);
      },
      15_000,
      'hook output',
    );
    const args = await eventually(() => {
      try {
        return JSON.parse(readFileSync(out, 'utf8')) as string[];
      } catch {
        return undefined;
      }
    });
    expect(args).toEqual([tricky, '', w.paneId]);
    expect((await tmux.listPanes()).find((p) => p.paneId === w.paneId)?.dead).toBe(true);
  });

  it('sends literal text and key names', async () => {
    const { server, tmux } = setup();
    const s = await tmux.newSession({ name: 'fleet-k', command: ['cat'] });
    await tmux.sendKeys(s.paneId, ['hello; $USER -l'], { literal: true });
    await tmux.sendKeys(s.paneId, ['Enter']);
    const screen = await server.waitFor(s.paneId, /hello; \$USER -l\n(.*\n)?hello; \$USER -l/);
    expect(screen).toContain('hello; $USER -l');
  });

  it('currentTmux finds the session of the pane named by $TMUX / $TMUX_PANE', async () => {
    const { tmux } = setup();
    await tmux.newSession({ name: 'first', command: LIVE });
    const s = await tmux.newSession({ name: 'second', command: LIVE });
    const socketPath = await tmux.display('#{socket_path}', s.paneId);
    const pid = await tmux.display('#{pid}', s.paneId);
    const env = { TMUX: `${socketPath},${pid},1`, TMUX_PANE: s.paneId };
    expect(parseTmuxEnv(env)).toEqual({ socketPath, serverPid: Number(pid), paneId: s.paneId });
    expect(await currentTmux(env)).toEqual({
      socketPath,
      serverPid: Number(pid),
      paneId: s.paneId,
      sessionId: s.sessionId,
    });
    expect(await currentTmux({})).toBeNull();
    expect(await currentTmux({ TMUX: '/nonexistent/socket,1,0', TMUX_PANE: '%0' })).toBeNull();
    // The socket path selects the same server with -S.
    expect((await new Tmux({ socket: socketPath }).listPanes()).length).toBe(2);
  });

  it('reports a failing command in one line and an empty server as no panes', async () => {
    const { tmux } = setup();
    expect(await tmux.listPanes()).toEqual([]);
    await expect(tmux.killWindow('@999')).rejects.toThrow(
      /^tmux kill-window failed \(server flotilla-test-[^)]+\): .+ — /,
    );
    expect((await tmux.version())?.major).toBeGreaterThanOrEqual(3);
  });
});
