import { execa } from 'execa';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentRecord } from '../../src/fleet/record.js';
import { processStartTime } from '../../src/fleet/proc.js';
import { shimHosts } from '../../src/fleet/shim-hosts.js';
import { listRecords, readRecord } from '../../src/fleet/registry.js';
import type { Layout } from '../../src/layout/layout.js';
import { CLI, SPAWN_AGENT } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { testHome, type HomeKind } from '../helpers/home.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { trustProject } from '../helpers/trust.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures/spawn/', import.meta.url));
export const fixture = (name: string): string => join(FIXTURES, name);

/**
 * A real project (git repo) with a fleet root, a private tmux server, definitions whose
 * models are scripts from test/fixtures/spawn, and a clean environment for the CLI: no
 * $TMUX, no inherited FLOTILLA_* identity, a private user config dir.
 */
export interface SpawnFleet extends TempFleet {
  tmux: TmuxServer;
  env: Record<string, string>;
  /** Runs `spawn-agent` (tools/spawn-agent) in the project. */
  spawnAgent(args: string[], env?: Record<string, string>): Promise<Run>;
  /** Runs `flotilla <args>` in the project. */
  flotilla(args: string[], env?: Record<string, string>): Promise<Run>;
  record(id: string): AgentRecord;
  records(): AgentRecord[];
  /** Messages (new/ and cur/) in an inbox, parsed loosely: header fields as strings, plus body. */
  mail(owner: string): Record<string, string>[];
  /** Window names in the whole test server. */
  windows(): Promise<string[]>;
  close(): Promise<void>;
}

/** A finished command: exit code and its output, trimmed of the last newline. */
export interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface FleetOptions {
  config?: string;
  /** Definitions: name → script file in test/fixtures/spawn. */
  definitions?: Record<string, string>;
  /** The fleet's tmux server lives under this TMUX_TMPDIR (every CLI call gets it), not /tmp. */
  tmuxTmpdir?: string;
  /** The shape of the fresh HOME (test/helpers/home.ts); pristine unless $FLOTILLA_TEST_HOME says. */
  home?: HomeKind;
  /** How the project folder's name starts (a temp folder's prefix). */
  prefix?: string;
}

const BASE_CONFIG = `agents:
  default_permission_mode: dont_ask
models:
  max_retries: 0
`;

/** A definition `name` in the project, run on Flotilla's own harness by the scripted model `script` (a fixture). */
export function scriptedDefinition(layout: Layout, name: string, script: string): void {
  writeFileSync(
    join(layout.agentsDir, `${name}.md`),
    `---\nname: ${name}\ndescription: test agent ${name}\nmodel: script:${fixture(script)}\n---\nYou are ${name}.\n`,
  );
}

export function spawnFleet(opts: FleetOptions = {}): SpawnFleet {
  const fleet = tempFleet(opts.prefix ?? 'flotilla-spawn-');
  const home = testHome(opts.home);
  const tmux = tmuxServer({ tmpdir: opts.tmuxTmpdir });
  writeFileSync(join(fleet.project, 'README'), 'test project\n');
  mkdirSync(fleet.layout.agentsDir, { recursive: true });
  writeFileSync(fleet.layout.configFile, BASE_CONFIG + (opts.config ?? ''));
  for (const [name, script] of Object.entries(opts.definitions ?? {})) scriptedDefinition(fleet.layout, name, script);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    // A fresh HOME, as on a new machine: nothing of the person running the tests is read.
    HOME: home.dir,
    // Where it is by default; named, so `trustProject` can tell it is the test's own.
    XDG_CONFIG_HOME: join(home.dir, '.config'),
    FLOTILLA_TMUX_SOCKET: tmux.socket,
    LANG: 'C.UTF-8',
    ...(opts.tmuxTmpdir ? { TMUX_TMPDIR: opts.tmuxTmpdir } : {}),
    // Start-up and typing spans (src/trace.ts) of every agent, when the person running the tests asks for them.
    ...(process.env.FLOTILLA_TRACE ? { FLOTILLA_TRACE: process.env.FLOTILLA_TRACE } : {}),
  };
  // The base config raises the default mode, which only a trusted folder may (docs/security-trust.md "Folder trust").
  trustProject(fleet.project, env);
  const run = async (file: string, args: string[], extra: Record<string, string> = {}): Promise<Run> => {
    const r = await execa(file, args, {
      cwd: fleet.project,
      env: { ...env, ...extra },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
  };
  return {
    ...fleet,
    tmux,
    env,
    spawnAgent: (args, extra) => run(SPAWN_AGENT, args, extra),
    flotilla: (args, extra) => run(process.execPath, [CLI, ...args], extra),
    record: (id) => {
      const r = readRecord(fleet.layout, id);
      if (!r) throw new Error(`no record ${id}`);
      return r;
    },
    records: () => listRecords(fleet.layout),
    mail: (owner) => readMail(join(fleet.layout.inbox(owner))),
    windows: async () =>
      (await tmux.tmux('list-windows', '-a', '-F', '#{window_name}').catch(() => '')).split('\n').filter(Boolean),
    async close() {
      // A child still starting would write its record after we look: let it get a pid first.
      await eventually(
        () => listRecords(fleet.layout).every((r) => r.status !== 'spawning'),
        10_000,
        'spawns to settle',
      ).catch(() => undefined);
      await tmux.kill();
      // Harnesses get SIGHUP from the closed windows; give them a moment to let go of files.
      await eventually(
        () => listRecords(fleet.layout).every((r) => !r.pid || !isAlive(r.pid)),
        10_000,
        'harnesses to exit',
      ).catch(() => undefined);
      for (const r of listRecords(fleet.layout))
        if (r.pid && isAlive(r.pid))
          try {
            process.kill(r.pid, 'SIGKILL');
          } catch {
            /* gone */
          }
      // The fleet's shim host would stay its idle while after its agents (shim-host/server.ts): it goes with them.
      killShimHost(fleet.layout);
      // A reaper started by a pane-died hook may still be writing: retry the removal briefly.
      await eventually(
        () => {
          rmSync(fleet.project, { recursive: true, force: true });
          return true;
        },
        10_000,
        `removal of ${fleet.project}`,
      );
      home.cleanup();
    },
  };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\S+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function readMail(box: string): Record<string, string>[] {
  const list = (sub: string) => {
    try {
      return readdirSync(join(box, sub)).filter((x) => !x.startsWith('.'));
    } catch {
      return [];
    }
  };
  // new/ listed before cur/: a claim links new/x to cur/x:2,S and then unlinks new/x, so a message
  // claimed meanwhile shows in cur/'s listing, or in new/'s alone, and once here either way. A new/
  // copy of a message already in cur/ (a redelivery, or a claim between its link and its unlink) is
  // the same message: the product's readers drop it and status does not count it (src/inbox/read.ts).
  const fresh = list('new');
  const claimed = list('cur');
  const claimedNames = new Set(claimed.map((n) => n.replace(/:2,.*$/, '')));
  const files = [
    ...fresh.filter((n) => !claimedNames.has(n)).map((n) => join('new', n)),
    ...claimed.map((n) => join('cur', n)),
  ];
  const out: Record<string, string>[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(join(box, file), 'utf8');
    } catch {
      // Claimed since the listing: it is in cur/ now.
      try {
        text = readFileSync(join(box, file.replace(/^new/, 'cur') + ':2,S'), 'utf8');
      } catch {
        continue;
      }
    }
    const m = /^---\n([\s\S]*?)\n---\n?([\s\S]*)$/.exec(text);
    if (!m) continue;
    const fields: Record<string, string> = { body: m[2]!, file };
    for (const line of m[1]!.split('\n')) {
      const kv = /^([a-z_]+):\s*(.*)$/.exec(line);
      if (kv) fields[kv[1]!] = kv[2]!.replace(/^['"]|['"]$/g, '');
    }
    out.push(fields);
  }
  return out;
}

/** Completion messages from `from` in `owner`'s inbox. */
export function completionsFrom(f: SpawnFleet, owner: string, from: string): Record<string, string>[] {
  return f.mail(owner).filter((m) => m.kind === 'completion' && m.from === from);
}

/** Kills the fleet's shim hosts, if any runs (each by its pid and start time: never a reused pid). */
export function killShimHost(layout: Layout): void {
  for (const h of shimHosts(layout))
    try {
      if (processStartTime(h.pid) === h.start) process.kill(h.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
}
