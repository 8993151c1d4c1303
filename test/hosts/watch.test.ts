import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/tmux.js';
import { trustProject } from '../helpers/trust.js';
import { hostsOnBus } from './helpers.js';
import { openDashboard } from '../helpers/dashboard.js';

/**
 * `flotilla watch` on a fleet whose two hosts share a real nats-server (docs/design.md §17.6):
 * this host (`here`) runs the dashboard in a window of a private tmux server; host `r1` is a
 * real sshd with its own fleet root and tmux server. The person sees r1's agent under r1's
 * heading, its changes and its host going LOST, and Enter shows them the agent's own pane
 * through `ssh -t`.
 */
const hosts = hostsOnBus();

const DASH = 'dash:0';

describe("the dashboard shows every host's agents", { timeout: 300_000 }, () => {
  it("r1's agent under Host r1, its changes, LOST once r1 stops beating; Enter opens its pane through ssh -t; without a hosts: entry one line and the dashboard goes on", async () => {
    const pair = await hosts.open({ remoteDefinitions: { worker: 'worker.yaml' } });
    const { local, remote } = pair;
    // r1 counts as lost 15 s after its last heartbeat (its live agents beat every 2 s).
    const config = `${readFileSync(local.layout.configFile, 'utf8')}    lost_after_secs: 15\n`;
    writeFileSync(local.layout.configFile, config);
    trustProject(local.project, local.env);

    const spawned = await remote.spawnAgent(['--agent', 'worker', '--id', 'far-1', 'work on r1']);
    expect(spawned.stderr).toBe('');
    expect(spawned.exitCode).toBe(0);
    // What the agent's own window on r1 shows once it has answered.
    await eventually(() => remote.record('far-1').status === 'idle', 120_000, "r1's agent idle");
    const farPane = remote.record('far-1').tmux!.paneId;
    await remote.tmux.waitFor(farPane, /Answer: result-of-far-1/, 60_000);

    // The person's dashboard on this host, in a window of this host's tmux server.
    const tmux = local.tmux;
    await openDashboard(tmux, { session: 'dash', width: 120, height: 30, cwd: local.project, env: local.env });
    // Windows the dashboard opens get the person's environment (a fresh HOME here), as their own windows do.
    for (const [k, v] of Object.entries(local.env)) await tmux.tmux('set-environment', '-g', k, v);

    const screen = await tmux.waitFor(DASH, /Host r1 — heartbeat \d+ s ago\n.{0,3}far-1 \*\s+idle/, 90_000);
    expect(screen).toMatch(/Host here \(this machine\) · no agents/);
    // This host's heading comes first, then r1's.
    expect(screen.indexOf('Host here (this machine)')).toBeLessThan(screen.indexOf('Host r1'));

    // Enter on it: a new window of the person's session, whose pane shows the agent's own pane on r1.
    await tmux.tmux('send-keys', '-t', DASH, 'Enter');
    const attached = await eventually(
      async () => {
        const windows = (await tmux.tmux('list-windows', '-t', 'dash', '-F', '#{window_id} #{window_name}')).split(
          '\n',
        );
        return windows.find((w) => w.endsWith(' far-1@r1'))?.split(' ')[0];
      },
      60_000,
      "the window attached to r1's agent",
    );
    const seen = await tmux.waitFor(attached, /Answer: result-of-far-1/, 90_000);
    expect(seen).toMatch(/Working\./);
    // The dashboard is still there, in its own window.
    expect(await tmux.capture(DASH)).toMatch(/Host r1 — /);
    // Leaving r1's tmux (detach) ends ssh, and the window closes.
    await tmux.tmux('send-keys', '-t', attached, 'C-b', 'd');
    await eventually(
      async () => !(await tmux.tmux('list-windows', '-t', 'dash', '-F', '#{window_name}')).includes('far-1@r1'),
      60_000,
      'the window closed after detaching',
    );

    // Its state changes there: the dashboard here follows.
    expect((await remote.flotilla(['cancel', 'far-1'])).exitCode).toBe(0);
    await tmux.waitFor(DASH, /Host r1 — [^\n]*\n.{0,3}far-1 \*\s+cancelled/, 90_000);
    // r1 runs nothing now, so nothing beats for it: past lost_after_secs it is LOST.
    await tmux.waitFor(DASH, /Host r1 — LOST: no heartbeat for \d+ s/, 90_000);

    // A person whose config has no r1 under hosts: sees it all the same; Enter says to add it, in one line.
    writeFileSync(local.layout.configFile, config.slice(0, config.indexOf('hosts:\n')));
    trustProject(local.project, local.env);
    await openDashboard(tmux, { session: 'bare', width: 120, height: 30, cwd: local.project, env: local.env });
    await tmux.waitFor('bare:0', /Host r1 — LOST[^\n]*\n.{0,3}far-1 \*\s+cancelled/, 90_000);
    const refused = await eventually(
      async () => {
        await tmux.tmux('send-keys', '-t', 'bare:0', 'Enter');
        const text = await tmux.capture('bare:0');
        return /r1 is not under hosts: in your config/.test(text) && text;
      },
      60_000,
      'the line saying to add r1 under hosts:',
    );
    expect(refused).toMatch(
      /^r1 is not under hosts: in your config — add it to attach: hosts: \{r1: \{ssh: user@machine\}\}$/m,
    );
    expect((await tmux.tmux('list-windows', '-t', 'bare', '-F', '#{window_name}')).split('\n')).toHaveLength(1);
    // And the dashboard goes on: its keys still answer.
    await tmux.tmux('send-keys', '-t', 'bare:0', '?');
    await tmux.waitFor('bare:0', /Keys/, 30_000);
  });
});
