import { execa } from 'execa';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ancestors } from '../../src/fleet/proc.js';
import { shimHosts } from '../../src/fleet/shim-hosts.js';
import { claude } from '../../src/runtimes/claude.js';
import { eventually } from '../helpers/tmux.js';
import { pinnedRuntimeBinary, type VendorFleet } from '../runtimes/helpers.js';
import { DONT_ASK, vendorFleets } from '../runtimes/vendor-suite.js';
import { completionsFrom } from '../spawn/helpers.js';

/**
 * The shim host (§13, src/shim-host/): every spawned vendor agent's shim runs in one Node process per fleet and
 * machine, while the agent's pane runs `tools/shim-pane` (perl) as its CLI's parent. Real tmux, the pinned Claude
 * Code against a fake Anthropic API, a fresh HOME.
 */
const fleets = vendorFleets();
const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const open = (): Promise<VendorFleet> =>
  fleets.open({
    runtime: claude,
    wire: 'anthropic',
    script: 'idle.yaml',
    bin: pinnedRuntimeBinary('claude'),
    definitions: { a: DONT_ASK },
    env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_AUTH_TOKEN: 'fake-token-for-a-local-server' }),
  });

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}

function hostPid(f: VendorFleet): number {
  const hosts = shimHosts(f.layout);
  expect(hosts).toHaveLength(1);
  return hosts[0]!.pid;
}

/** Spawned at once: the first spawn starts the host beside its window, the second waits for that one. */
async function twoIdleAgents(f: VendorFleet): Promise<[string, string]> {
  const [a, b] = await Promise.all([
    f.spawnChild('a', 'hosted-a', 'get ready'),
    f.spawnChild('a', 'hosted-b', 'get ready'),
  ]);
  for (const id of [a, b]) {
    await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, `${id}'s first completion`);
    await eventually(() => f.record(id).status === 'idle', 60_000, `${id} idle`);
  }
  return [a, b];
}

describe('the shim host', { timeout: 600_000 }, () => {
  it("runs two agents' shims in one process; each pane's process is a few MB of perl, its CLI's parent; one agent's end leaves the other answering mail", async () => {
    const f = await open();
    const [a, b] = await twoIdleAgents(f);
    const host = hostPid(f);
    expect(cmdline(host)).toContain('--shim-host');
    // One host started for the burst, and no pane's own fallback start.
    const log = readFileSync(join(f.layout.logsDir, 'shim-host.log'), 'utf8');
    expect(log.match(/: serving /g)).toHaveLength(1);
    for (const id of [a, b]) {
      const pane = f.record(id).pid!;
      expect(cmdline(pane)).toContain('tools/shim-pane');
      expect(rssKb(pane)).toBeLessThan(16 * 1024);
      const cli = f.cliPid(id)!;
      expect(ancestors(cli)).toContain(pane);
      expect(ancestors(cli)).not.toContain(host);
      expect(readFileSync(`/proc/${cli}/environ`, 'utf8')).not.toContain('FLOTILLA_SHIM_HOST_PID=');
    }
    await f.tmux.tmux('kill-window', '-t', f.record(a).tmux!.windowId);
    await eventually(() => f.record(a).status === 'cancelled', 60_000, `${a} cancelled`);
    await f.flotilla(['send', b, 'wake-up-call-77']);
    await eventually(() => completionsFrom(f, 'lead-parent', b).length === 2, 240_000, `${b}'s second completion`);
    expect(f.vendor.seen()).toMatch(/<inbox-message [^>]*>\s*wake-up-call-77/);
    expect(completionsFrom(f, 'lead-parent', a)).toHaveLength(1);
    expect(hostPid(f)).toBe(host);
  });

  it("a pane's process SIGKILLed: its CLI is stopped, its pane's reaper ends the agent, the host's other agent goes on; the host ends once idle", async () => {
    const f = await open();
    const [a, b] = await twoIdleAgents(f);
    const cli = f.cliPid(a)!;
    process.kill(f.record(a).pid!, 'SIGKILL');
    await eventually(() => !existsSync(`/proc/${cli}`), 30_000, "the killed pane's CLI to end");
    // Ended by its pane's reaper, as a killed shim's agent was; idle with its task answered, it did nothing wrong.
    await eventually(() => f.record(a).status === 'completed', 60_000, `${a} ended (${f.record(a).status})`);
    expect(f.record(a).exitReason).toBe('exited while idle');
    await new Promise((r) => setTimeout(r, 1500));
    expect(completionsFrom(f, 'lead-parent', a)).toHaveLength(1);
    await f.flotilla(['send', b, 'wake-up-call-77']);
    await eventually(() => completionsFrom(f, 'lead-parent', b).length === 2, 240_000, `${b}'s second completion`);
    // With no agent left it lets go after its idle while (SHIM_HOST_IDLE_MS, 30 s): its socket and pid go too.
    const host = hostPid(f);
    await f.tmux.tmux('kill-window', '-t', f.record(b).tmux!.windowId);
    await eventually(() => !existsSync(`/proc/${host}`), 90_000, 'the idle host to end');
    expect(existsSync(f.layout.shimHostSocket)).toBe(false);
    expect(shimHosts(f.layout)).toEqual([]);
  });

  it('the host SIGKILLed: each pane says so, its CLI ends, and each idle agent ends with its one completion', async () => {
    const f = await open();
    const ids = await twoIdleAgents(f);
    const clis = ids.map((id) => f.cliPid(id)!);
    process.kill(hostPid(f), 'SIGKILL');
    for (const [i, id] of ids.entries()) {
      await eventually(() => !existsSync(`/proc/${clis[i]}`), 30_000, `${id}'s CLI to end`);
      // Its task was answered: an agent that ends while idle did nothing wrong (lifecycle/reconcile.ts endDead).
      await eventually(() => f.record(id).status === 'completed', 60_000, `${id} ended (${f.record(id).status})`);
      expect(f.record(id).exitReason).toBe('exited while idle');
      expect(await f.tmux.capture(f.record(id).tmux!.paneId)).toContain("the fleet's shim host ended");
    }
    await new Promise((r) => setTimeout(r, 1500));
    for (const id of ids) expect(completionsFrom(f, 'lead-parent', id)).toHaveLength(1);
  });

  it("a host whose code was rebuilt takes no new agent: the next spawn's pane starts a host of the new code, and the old one serves its agent until it ends", async () => {
    const f = await open();
    // A copy of the package, whose build this test may change under its host without touching the one other tests run.
    const pkg = mkdtempSync(join(f.home, '..', 'flotilla-pkg-'));
    try {
      cpSync(join(REPO, 'dist'), join(pkg, 'dist'), { recursive: true });
      cpSync(join(REPO, 'tools'), join(pkg, 'tools'), { recursive: true });
      cpSync(join(REPO, 'package.json'), join(pkg, 'package.json'));
      symlinkSync(join(REPO, 'node_modules'), join(pkg, 'node_modules'));
      const spawnFromCopy = async (id: string) => {
        const r = await execa(join(pkg, 'tools', 'spawn-agent'), ['--agent', 'a', '--id', id, 'get ready'], {
          cwd: f.project,
          env: f.env,
          extendEnv: false,
          reject: false,
        });
        expect(r.exitCode, r.stderr).toBe(0);
        await eventually(() => completionsFrom(f, 'lead-parent', id).length === 1, 240_000, `${id}'s completion`);
      };
      await spawnFromCopy('before-build');
      const old = hostPid(f);
      const later = new Date(Date.now() + 5_000);
      utimesSync(join(pkg, 'dist', 'cli', 'main.js'), later, later);
      await spawnFromCopy('after-build');
      const hosts = shimHosts(f.layout).map((h) => h.pid);
      expect(hosts).toHaveLength(2);
      expect(hosts).toContain(old);
      // The new host, started by its pane's process as no spawn started one, holds no vendor login either.
      for (const pid of hosts) expect(readFileSync(`/proc/${pid}/environ`, 'utf8')).not.toContain('ANTHROPIC_');
      // The old host still serves its agent: mail wakes it.
      await eventually(() => f.record('before-build').status === 'idle', 60_000, 'idle');
      await f.flotilla(['send', 'before-build', 'wake-up-call-77']);
      await eventually(() => completionsFrom(f, 'lead-parent', 'before-build').length === 2, 240_000, 'woken');
      await f.tmux.tmux('kill-window', '-t', f.record('before-build').tmux!.windowId);
      await eventually(() => !existsSync(`/proc/${old}`), 60_000, 'the old host to end with its last agent');
      expect(shimHosts(f.layout).map((h) => h.pid)).toEqual(hosts.filter((p) => p !== old));
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  });
});
