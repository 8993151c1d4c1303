import type { Config } from '../../config/schema.js';
import type { AgentRecord } from '../../fleet/record.js';
import type { PermissionMode } from '../../policy/permission-mode.js';
import type { VendorRuntimeName } from '../../runtimes/types.js';
import { DOOR_BUS_ENV, DOOR_ENV, VENDOR_DOOR_COMMANDS } from '../../inbox/door.js';
import { busCredentials } from '../../tools/command-env.js';
import type { Layout } from '../../layout/layout.js';
import { PACKAGE_ROOT } from '../../layout/package.js';
import { agentHostPaths } from '../host-paths.js';
import { effectiveSandbox } from '../../tools/sandbox-mode.js';
import {
  bubblewrapArgv,
  bubblewrapNests,
  bubblewrapUserNamespace,
  NESTING_ID,
  tmuxHiding,
  type SandboxSpec,
} from '../../tools/sandbox.js';
import { credentialPaths } from '../../tools/sandbox-credentials.js';
import { tmuxSocketPaths } from '../../tmux/sockets.js';
import { gitWrites, inPlaceOf, withGitWrites } from '../../tools/git-writable.js';
import { openAgentDoor, sendAs } from '../door-send.js';
import type { CliPane, CliProcess, StartedCli } from './cli-pane.js';

/**
 * A vendor CLI inside Flotilla's bubblewrap (docs/security-fleet.md "Vendor runtimes"), where the
 * effective sandbox is bubblewrap: the CLI and every command its shell tool runs see the
 * filesystem read-only but for the agent's cwd, its own config folder (sessions, settings,
 * history) and a private /tmp; the fleet root, `.claude/`, the git dir and the user's config
 * stay read-only inside those; tmux servers, the doors and the secret sockets are hidden;
 * the network stays on (the CLI is a model client). The CLI reaches the fleet through the
 * agent's door, which the shim opens: its hooks (`runtime-hook`) and fleet commands run on
 * the host as the shim's children, and `flotilla mcp` is joined to one the shim runs, so they
 * act as the agent by ancestry. `--new-session` takes the terminal's control from it: nothing
 * inside can push keystrokes into the pane (TIOCSTI); the CLI still reads and draws through
 * the pane as its stdio.
 */
export interface ContainedCli {
  /**
   * The program and arguments to start instead of the CLI's own, made afresh at each call:
   * tmux servers are looked for again (one that ended meanwhile took its directory along).
   */
  argv(): string[];
  /** The CLI's environment, with its door. */
  env: NodeJS.ProcessEnv;
}

/**
 * Whether the CLI runs its commands in a bubblewrap of its own in this mode: Codex in `plan`,
 * `default` and `accept_edits` (its read-only and workspace-write sandboxes), nested in Flotilla's.
 */
export function nestsOwnSandbox(runtime: VendorRuntimeName, mode: PermissionMode): boolean {
  return runtime === 'codex' && mode !== 'dont_ask' && mode !== 'bypass_permissions';
}

export interface CliSandbox {
  /** The bwrap to run the CLI in; none where the effective sandbox is not bubblewrap. */
  bwrap?: string;
  /** Why the CLI runs outside Flotilla's sandbox though the sandbox is bubblewrap: one line for its pane. */
  outside?: string;
}

/**
 * The sandbox of this member's CLI: Flotilla's bubblewrap wherever that is the effective
 * sandbox, in every mode. Codex's own bubblewrap (`nestsOwnSandbox`) starts inside it where
 * the kernel lets a user namespace be made inside another (`bubblewrapNests`); where it does
 * not, Codex's commands would all be refused ("bwrap: setting up uid map: Operation not
 * permitted"), so Codex in those modes runs outside Flotilla's, with its own as the boundary,
 * and its pane says so.
 */
export function cliSandbox(
  config: Pick<Config, 'security'>,
  env: NodeJS.ProcessEnv,
  runtime: VendorRuntimeName,
  mode: PermissionMode,
): CliSandbox {
  const s = effectiveSandbox(config, env);
  if (s.kind !== 'bubblewrap') return {};
  if (nestsOwnSandbox(runtime, mode) && !bubblewrapNests(s.bwrap)) {
    return {
      outside: `flotilla: Codex runs outside Flotilla's sandbox in ${mode} mode: ${s.bwrap} cannot start its own sandbox inside another here, so Codex's own is the only boundary and your credentials are within its commands' reach; in dont_ask it runs in Flotilla's (docs/security-fleet.md, "Vendor runtimes")`,
    };
  }
  return { bwrap: s.bwrap };
}

export async function containCli(opts: {
  layout: Layout;
  config: Config;
  rec: AgentRecord;
  bwrap: string;
  runtime: VendorRuntimeName;
  /** The shim's own environment: where tmux servers are found (its TMUX, TMUX_TMPDIR). */
  shimEnv: NodeJS.ProcessEnv;
  cliEnv: NodeJS.ProcessEnv;
  configDir: string;
  bin: string;
  argv: readonly string[];
  /** An untrusted folder's own CLI settings, hidden from the CLI (folder-trust.ts). */
  folderSettings?: readonly string[];
  /**
   * The shim's copy of the person's shared login, in a folder of its own (login-mirror.ts): the one writable spot among
   * the secrets.
   */
  loginDir?: string | undefined;
  /** Whether the CLI was exec'd, once known: the door's MCP server and hooks load then (door-send.ts). */
  execed?: Promise<boolean>;
}): Promise<ContainedCli> {
  const { layout, config, rec } = opts;
  const writable = [rec.cwd, opts.configDir];
  const { home, installed, readOnly } = agentHostPaths(layout, rec.cwd, opts.cliEnv);
  // The fleet commands the door runs for the CLI get the bus's credentials, which the CLI has not (cli-env.ts).
  const bus = busCredentials(config, opts.shimEnv);
  const door = await openAgentDoor(layout, config, rec, sendAs(layout, config, rec), {
    env: { ...opts.cliEnv, ...bus },
    writable,
    extra: VENDOR_DOOR_COMMANDS,
    hooksHere: true,
    ...(opts.execed ? { warmAfter: opts.execed } : {}),
  });
  if (!door)
    throw new Error(
      `cannot open the agent's door at ${layout.door(rec.id)} (a path over the Unix socket limit?) — the CLI cannot reach the fleet from its sandbox`,
    );
  // The home folder stays readable wherever it lives: the sandbox's private /tmp would hide a
  // home under /tmp (a CI runner's, a test's), so the CLI would see less than on a person's machine.
  // A home the cwd holds stays writable with it. The person's credentials are hidden, all but
  // this CLI's own login, found where the person keeps it (the shim's environment: the CLI's
  // own points at its per-agent folder; tools/sandbox-credentials.ts).
  const creds = credentialPaths({
    home,
    env: opts.shimEnv,
    extra: config.security.hidden_paths,
    runtime: opts.runtime,
  });
  // Root's own id would keep Codex's nested bubblewrap from mapping its user (SandboxSpec.id).
  const id = nestsOwnSandbox(opts.runtime, rec.permissionMode) && process.geteuid?.() === 0 ? NESTING_ID : undefined;
  const spec: SandboxSpec = {
    writable: [...writable, ...(opts.loginDir ? [opts.loginDir] : [])],
    readOnly: [...readOnly, ...creds.own],
    visible: [home],
    network: true,
    bwrap: opts.bwrap,
    userNamespace: bubblewrapUserNamespace(opts.bwrap),
    id,
    direct: true,
    hidden: [layout.doorsDir, layout.secretsDir, ...creds.hidden, ...(opts.folderSettings ?? [])],
    sockets: [door],
  };
  const needed = [...writable, home, PACKAGE_ROOT, ...installed];
  return {
    argv: () => {
      const tmux = tmuxHiding(tmuxSocketPaths(opts.shimEnv), needed);
      return markedArgv(
        withGitWrites(
          { ...spec, hidden: [...spec.hidden!, ...tmux.hidden], covered: tmux.covered },
          gitWrites(rec.worktree, rec.id, inPlaceOf(layout, rec)),
        ),
        [opts.bin, ...opts.argv],
      );
    },
    env: { ...opts.cliEnv, [DOOR_ENV]: door, ...(Object.keys(bus).length ? { [DOOR_BUS_ENV]: '1' } : {}) },
  };
}

/**
 * bubblewrap around a CLI that first writes one byte on fd 3 from inside the sandbox, then
 * becomes the CLI with fd 3 closed: the byte says the sandbox was made (`startContained`).
 */
export function markedArgv(spec: SandboxSpec, argv: readonly string[]): string[] {
  return bubblewrapArgv({ ...spec, direct: true }, [
    'sh',
    '-c',
    'printf . >&3; exec "$@" 3>&-',
    'flotilla-cli',
    ...argv,
  ]);
}

/**
 * Starts a contained CLI on the pane's terminal. bubblewrap can refuse its mounts before
 * anything runs — a directory it was to hide removed meanwhile (a tmux server ending takes
 * its own along) — and then exits 1 without the sandbox's byte on fd 3; such a start is made
 * once more with a fresh argv. `onChild` hears each process, so a signal reaches the current one.
 */
export async function startContained(
  pane: Pick<CliPane, 'start' | 'say'>,
  cli: ContainedCli,
  cwd: string,
  onChild: (child: CliProcess) => void,
): Promise<StartedCli> {
  for (let attempt = 1; ; attempt++) {
    const started = pane.start({ argv: cli.argv(), env: cli.env, cwd, marked: true });
    onChild(started.child);
    if ((await started.began) || attempt > 1 || (await started.exited).code !== 1) return started;
    pane.say('flotilla: the sandbox could not be made (see above); starting the CLI again');
  }
}
