import { execa } from 'execa';
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listRecords } from '../../src/fleet/registry.js';
import { isProcessAlive } from '../../src/fleet/proc.js';
import { resolveLayout, type Layout } from '../../src/layout/layout.js';
import { testHome, type TestHome } from '../helpers/home.js';
import { requireTool } from '../helpers/requires.js';
import { eventually, tmuxServer, type TmuxServer } from '../helpers/tmux.js';
import { startFakeVendor, namingFor, type FakeVendor } from '../runtimes/fake-vendor.js';
import { pinnedRuntimeBinary } from '../runtimes/helpers.js';
import { TARGETS } from '../runtimes/targets.js';

/**
 * The world a person's day runs in (test/scenarios/day.test.ts): a pristine home, a forge
 * holding the shop repository (made from fixtures/shop, with its own `.claude/agents/`), a
 * private tmux server whose first session is the person's terminal, and one fake provider
 * per vendor API playing fixtures/model/<cli>.yaml.
 */
export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const TOOLS = fileURLToPath(new URL('../../tools/', import.meta.url));

export interface World {
  home: TestHome;
  /** The bare repository the person clones (the forge's copy). */
  forge: string;
  /** Where the person's clone will be. */
  project: string;
  tmux: TmuxServer;
  /** The person's environment: the one their terminal and every `flotilla` they run has. */
  env: Record<string, string>;
  providers: Record<'claude' | 'codex' | 'gemini', FakeVendor>;
  /** The secret the person holds and an agent will ask for. */
  secret: string;
  layout(): Layout;
  /** What a failing step prints: the board, every agent's state and screen, what each provider was asked. */
  explain(): Promise<void>;
  dispose(): Promise<void>;
}

/** `scripts`: a provider's script other than fixtures/model/<cli>.yaml (a file name there). */
export async function openWorld(
  opts: { scripts?: Partial<Record<'claude' | 'codex' | 'gemini', string>> } = {},
): Promise<World> {
  requireTool('tmux');
  requireTool('git');
  requireTool('bwrap');
  const home = testHome('pristine');
  const base = dirname(home.dir);
  const forge = await makeForge(join(base, 'forge'));
  const tmux = tmuxServer();
  // Stand-in for the vendors' APIs and logins: local fake servers, reached by the CLIs' documented key and base-URL
  // variables.
  const providers = {
    claude: await startFakeVendor(
      'anthropic',
      join(FIXTURES, 'model', opts.scripts?.claude ?? 'claude.yaml'),
      namingFor(TARGETS.claude().runtime),
    ),
    codex: await startFakeVendor(
      'responses',
      join(FIXTURES, 'model', opts.scripts?.codex ?? 'codex.yaml'),
      namingFor(TARGETS.codex().runtime),
    ),
    gemini: await startFakeVendor(
      'gemini',
      join(FIXTURES, 'model', opts.scripts?.gemini ?? 'gemini.yaml'),
      namingFor(TARGETS.gemini().runtime),
    ),
  };
  const secret = `dk_live_${process.pid}x${Date.now()}Q7`;
  const env: Record<string, string> = {
    PATH: `${TOOLS.replace(/\/$/, '')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home.dir,
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    SHELL: '/bin/sh',
    // The test's own tmux server, where a person's would be the default one.
    FLOTILLA_TMUX_SOCKET: tmux.socket,
    // The pinned CLIs, where a person's `npm install -g` would put them on PATH.
    FLOTILLA_CLAUDE_BIN: pinnedRuntimeBinary('claude'),
    FLOTILLA_CODEX_BIN: pinnedRuntimeBinary('codex'),
    FLOTILLA_GEMINI_BIN: pinnedRuntimeBinary('gemini'),
    ...TARGETS.claude().env(providers.claude.url),
    ...TARGETS.codex().env(providers.codex.url),
    ...TARGETS.gemini().env(providers.gemini.url),
    // The person's git identity, as their ~/.gitconfig would give it.
    GIT_AUTHOR_NAME: 'Pat Person',
    GIT_AUTHOR_EMAIL: 'pat@example.com',
    GIT_COMMITTER_NAME: 'Pat Person',
    GIT_COMMITTER_EMAIL: 'pat@example.com',
    // The person's deploy key, exported in their shell as people do.
    DEPLOY_TOKEN: secret,
  };
  // The person's terminal starts the tmux server, so the server (and every window in it) has their environment.
  await execa(
    'tmux',
    ['-L', tmux.socket, 'new-session', '-d', '-s', 'desk', '-x', '160', '-y', '50', '-c', home.dir, '/bin/sh'],
    { env, extendEnv: false },
  );
  const project = join(home.dir, 'shop');
  const layout = (): Layout => resolveLayout({ cwd: project, env: {} });
  return {
    home,
    forge,
    project,
    tmux,
    env,
    providers,
    secret,
    layout,
    async explain() {
      const l = layout();
      const tasks = l.board('fleet').tasksDir;
      try {
        console.error(
          `--- board:\n${readdirSync(tasks)
            .map((n) => readFileSync(join(tasks, n), 'utf8').slice(0, 500))
            .join('\n')}`,
        );
      } catch {
        /* no board yet */
      }
      for (const r of listRecords(l)) {
        const screen = r.tmux ? await tmux.capture(r.tmux.paneId).catch(() => '(pane gone)') : '(no pane)';
        let log = '';
        try {
          log = readFileSync(l.log(r.id), 'utf8').slice(-1500);
        } catch {
          /* none */
        }
        console.error(
          `--- ${r.id} (${r.status}, ${r.exitReason ?? ''}) pane:\n${screen
            .split('\n')
            .filter((x) => x.trim())
            .slice(-30)
            .join('\n')}\n--- log:\n${log}`,
        );
      }
      for (const [name, p] of Object.entries(providers))
        console.error(`--- ${name}: ${p.prompts.length} scripted calls; last input:\n${p.seen().slice(-1500)}`);
    },
    async dispose() {
      const pids = (() => {
        try {
          return listRecords(layout()).flatMap((r) => (r.pid ? [[r.pid, r.pidStartTime] as const] : []));
        } catch {
          return [];
        }
      })();
      await tmux.kill();
      await eventually(
        () => pids.every(([pid, start]) => !isProcessAlive(pid, start)),
        15_000,
        'the fleet to exit',
      ).catch(() => undefined);
      for (const [pid, start] of pids)
        if (isProcessAlive(pid, start))
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            /* gone */
          }
      for (const p of Object.values(providers)) await p.close();
      home.cleanup();
    },
  };
}

/**
 * The shop repository on a "forge": a bare repository made from fixtures/shop, its definitions naming the scripted
 * models.
 */
async function makeForge(dir: string): Promise<string> {
  const work = join(dir, 'shop-src');
  cpSync(join(FIXTURES, 'shop'), work, { recursive: true });
  // The definitions' model lines name the scripted model: the stand-in for a provider.
  const agents = join(work, '.claude', 'agents');
  for (const name of readdirSync(agents)) {
    const file = join(agents, name);
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll('{{MODELS}}', join(FIXTURES, 'model')));
  }
  const git = (...args: string[]) =>
    execa('git', ['-c', 'user.name=Shop Owner', '-c', 'user.email=owner@example.com', ...args], { cwd: work });
  await git('init', '-q', '-b', 'main');
  await git('add', '-A');
  await git('commit', '-qm', 'The shop as it is');
  const bare = join(dir, 'shop.git');
  mkdirSync(dir, { recursive: true });
  await execa('git', ['clone', '-q', '--bare', work, bare]);
  return bare;
}

/** Every regular file under `dir` holding `needle` (a secret must be in none of them). */
export function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (d: string): void => {
    let names: string[] = [];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(d, name);
      let st;
      try {
        st = statSync(path);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(path);
      else if (st.isFile() && readFileSync(path, 'latin1').includes(needle)) hits.push(path);
    }
  };
  walk(dir);
  return hits;
}
