import { homedir } from 'node:os';
import type { Config } from '../../config/schema.js';
import type { AgentRecord } from '../../fleet/record.js';
import type { PermissionMode } from '../../policy/permission-mode.js';
import type { VendorRuntimeName } from '../../runtimes/types.js';
import { DOOR_ENV, VENDOR_DOOR_COMMANDS } from '../../inbox/door.js';
import { userPaths, type Layout } from '../../layout/layout.js';
import { PACKAGE_ROOT } from '../../layout/package.js';
import { effectiveSandbox } from '../../tools/sandbox-mode.js';
import { bubblewrapArgv, bubblewrapUserNamespace, hostExecutedPaths, installedPaths, tmuxHiding } from '../../tools/sandbox.js';
import { tmuxSocketPaths } from '../../tmux/sockets.js';
import { openAgentDoor, sendAs } from '../door-send.js';

/**
 * A vendor CLI inside Flotilla's bubblewrap (docs/security.md "Vendor runtimes"), where the
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
  /** The program and arguments to start instead of the CLI's own. */
  file: string;
  args: string[];
  /** The CLI's environment, with its door. */
  env: NodeJS.ProcessEnv;
}

/**
 * The bwrap to run this member's CLI in, or undefined: where the effective sandbox is
 * bubblewrap, except for Codex in the modes where Codex runs its commands in its own
 * bubblewrap (`plan`, `default`, `accept_edits`: read-only or workspace-write), which cannot
 * start inside Flotilla's ("bwrap: setting up uid map: Operation not permitted": no
 * capabilities to map ids in a nested user namespace) and would then refuse every command.
 */
export function cliSandbox(config: Pick<Config, 'security'>, env: NodeJS.ProcessEnv, runtime: VendorRuntimeName, mode: PermissionMode): string | undefined {
  if (runtime === 'codex' && mode !== 'dont_ask' && mode !== 'bypass_permissions') return undefined;
  const s = effectiveSandbox(config, env);
  return s.kind === 'bubblewrap' ? s.bwrap : undefined;
}

export async function containCli(opts: {
  layout: Layout; config: Config; rec: AgentRecord; bwrap: string;
  /** The shim's own environment: where tmux servers are found (its TMUX, TMUX_TMPDIR). */
  shimEnv: NodeJS.ProcessEnv;
  cliEnv: NodeJS.ProcessEnv; configDir: string; bin: string; argv: readonly string[];
}): Promise<ContainedCli> {
  const { layout, config, rec } = opts;
  const writable = [rec.cwd, opts.configDir];
  const home = opts.cliEnv.HOME ?? homedir();
  const user = userPaths(opts.cliEnv);
  const installed = installedPaths(PACKAGE_ROOT, process.execPath);
  const readOnly = hostExecutedPaths({
    fleetRoot: layout.root, project: layout.project, cwd: rec.cwd, home, userConfigDir: user.configDir, userCacheDir: user.cacheDir, installed,
  });
  const door = await openAgentDoor(layout, config, rec, sendAs(layout, config, rec), { env: opts.cliEnv, writable, extra: VENDOR_DOOR_COMMANDS });
  if (!door) throw new Error(`cannot open the agent's door at ${layout.door(rec.id)} (a path over the Unix socket limit?) — the CLI cannot reach the fleet from its sandbox`);
  const tmux = tmuxHiding(tmuxSocketPaths(opts.shimEnv), [...writable, home, PACKAGE_ROOT, ...installed]);
  // The home folder stays readable wherever it lives: the sandbox's private /tmp would hide a
  // home under /tmp (a CI runner's, a test's), so the CLI would see less than on a person's machine.
  const argv = bubblewrapArgv({
    writable, readOnly: [...readOnly, home], network: true, bwrap: opts.bwrap, userNamespace: bubblewrapUserNamespace(opts.bwrap), direct: true,
    hidden: [layout.doorsDir, layout.secretsDir, ...tmux.hidden], covered: tmux.covered, sockets: [door],
  }, [opts.bin, ...opts.argv]);
  return { file: argv[0]!, args: argv.slice(1), env: { ...opts.cliEnv, [DOOR_ENV]: door } };
}
