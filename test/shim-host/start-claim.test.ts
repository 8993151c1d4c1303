import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { shimHosts } from '../../src/fleet/shim-hosts.js';
import { shimHostAhead, startClaim } from '../../src/spawn/shim-host-process.js';
import { answers } from '../../src/socket-answers.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { testHome, type TestHome } from '../helpers/home.js';
import { eventually } from '../helpers/tmux.js';

/**
 * A vendor spawn starts the fleet's shim host beside its window's opening (src/spawn/shim-host-process.ts), one start
 * at a time through a claim beside the host's socket. A real host process (`flotilla run --shim-host`), a fresh home.
 */
let fleet: TempFleet;
let home: TestHome;
const started: number[] = [];

afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  fleet?.cleanup();
  home?.cleanup();
});

const KEY = 'sk-ant-spawner-key-never-in-the-host';
/** A key only the config names (an openai-compatible provider's): the spawn passes it as hidden. */
const CONFIG_KEY = 'tg-config-named-key-never-in-the-host';

function envFor(h: TestHome): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: h.dir,
    ANTHROPIC_API_KEY: KEY,
    TOGETHER_API_KEY: CONFIG_KEY,
    FLOTILLA_AGENT_ID: 'a-parent',
  };
}

/** A SIGKILLed host leaves its pid file: only a live one counts. */
function liveHosts(): number[] {
  return shimHosts(fleet.layout)
    .map((h) => h.pid)
    .filter((pid) => existsSync(`/proc/${pid}`) && !/State:\s+Z/.test(readFileSync(`/proc/${pid}/status`, 'utf8')));
}

async function ahead(): Promise<number | undefined> {
  const pid = await shimHostAhead(fleet.layout, envFor(home), ['TOGETHER_API_KEY']);
  if (pid) started.push(pid);
  return pid;
}

describe("a spawn starts the fleet's shim host", { timeout: 60_000 }, () => {
  it('a burst of five starts one host, which every one of them names; the host holds none of the hidden keys', async () => {
    fleet = tempFleet();
    home = testHome();
    const pids = await Promise.all([ahead(), ahead(), ahead(), ahead(), ahead()]);
    expect(new Set(pids).size).toBe(1);
    const [pid] = pids;
    expect(pid).toBeGreaterThan(0);
    await eventually(() => answers(fleet.layout.shimHostSocket), 20_000, 'the host to answer');
    expect(shimHosts(fleet.layout).map((h) => h.pid)).toEqual([pid]);
    await eventually(() => !existsSync(startClaim(fleet.layout)), 5_000, 'the claim to go once it listens');
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environ).toContain(`HOME=${home.dir}`);
    expect(environ.join('\n')).not.toContain(KEY);
    expect(environ.join('\n')).not.toContain(CONFIG_KEY);
    expect(environ.some((e) => e.startsWith('FLOTILLA_AGENT_ID='))).toBe(false);
    // One answering: the next spawn starts none.
    expect(await ahead()).toBeUndefined();
    expect(shimHosts(fleet.layout)).toHaveLength(1);
  });

  it('a claim left by a host that died before listening, or by a spawn killed while claiming, is taken over', async () => {
    fleet = tempFleet();
    home = testHome();
    const claim = startClaim(fleet.layout);
    mkdirSync(dirname(claim), { recursive: true });
    // A crash's leftovers, which only a crash leaves: a dead pid, then an empty claim.
    for (const leftover of ['2147483646\n', '']) {
      writeFileSync(claim, leftover);
      const pid = await ahead();
      expect(pid).toBeGreaterThan(0);
      await eventually(() => answers(fleet.layout.shimHostSocket), 20_000, 'the host to answer');
      expect(liveHosts()).toEqual([pid]);
      process.kill(pid!, 'SIGKILL');
      // Its other threads outlive its main one (already a zombie) for a moment, and its socket with them.
      await eventually(
        async () => liveHosts().length === 0 && !(await answers(fleet.layout.shimHostSocket)),
        10_000,
        'the killed host gone',
      );
    }
  });

  it("a live claim is another spawn's host starting: its pid, and no second host", async () => {
    fleet = tempFleet();
    home = testHome();
    // A host starting elsewhere, stood for by this live process: it never listens, so a start here would show.
    mkdirSync(dirname(startClaim(fleet.layout)), { recursive: true });
    writeFileSync(startClaim(fleet.layout), `${process.pid}\n`);
    // Not ahead(): its pid is this test's own process, which afterEach must not kill.
    expect(await shimHostAhead(fleet.layout, envFor(home), [])).toBe(process.pid);
    expect(await answers(fleet.layout.shimHostSocket)).toBe(false);
    expect(shimHosts(fleet.layout)).toEqual([]);
  });
});
