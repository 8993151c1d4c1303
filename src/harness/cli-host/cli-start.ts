import type { Config } from '../../config/schema.js';
import { agentEnvironment } from '../../fleet/agent-env.js';
import type { AgentRecord } from '../../fleet/record.js';
import { VENDOR_DOOR_COMMANDS } from '../../inbox/door.js';
import type { Layout } from '../../layout/layout.js';
import type { Runtime } from '../../runtimes/index.js';
import { traceMark } from '../../trace.js';
import { openAgentDoor, sendAs } from '../door-send.js';
import { vendorCliEnvironment } from './cli-env.js';
import { CliRefused, type PreparedCli } from './cli-launch.js';
import type { AgentEnding } from './ending.js';
import type { CliPane, CliProcess, StartedCli } from './cli-pane.js';
import { containCli, startContained } from './sandboxed-cli.js';

/**
 * The CLI's environment. The CLI, its hooks and its MCP server find their agent by ancestry;
 * these are hints and PATH. Without TMUX and other providers' keys: the CLI hands its
 * environment to every command it runs. Outside the sandbox on a bus with credentials, the
 * agent's door is opened here (inside, containCli opens it).
 */
export async function cliEnvironment(d: {
  layout: Layout;
  config: Config;
  rec: AgentRecord;
  runtime: Runtime;
  env: NodeJS.ProcessEnv;
  passEnv: readonly string[];
  /** Every secret key the spawner's environment named; only the agent's own reach the CLI. */
  secretKeys: readonly string[];
  cli: PreparedCli;
  /** Whether the CLI was exec'd, once it is known: the door's warm hook starts then (door-send.ts `warmAfter`). */
  execed: Promise<boolean>;
}): Promise<NodeJS.ProcessEnv> {
  const { layout, config, rec, cli } = d;
  const childEnv = vendorCliEnvironment(
    config,
    d.runtime.name,
    { ...d.env, ...agentEnvironment(layout, rec, d.env.PATH), ...cli.launch.env },
    d.passEnv,
  );
  delete childEnv.FLOTILLA_SLOT;
  // A vendor CLI gets a secret only as the person's own CLI would (docs/runtimes.md): its own
  // definition's keys from the spawner's environment, never another key's variable that a tmux
  // server started with it exported hands every window (the CLI would pass it to every command).
  const { secretSource, secretSourceVars, secretVarName } = await import('../../secrets/keys.js');
  const own = rec.effectivePolicy.secrets;
  const keep = new Set(
    own.flatMap((k) => {
      const src = secretSource(k, config);
      return ['env' in src ? src.env : '', secretVarName(k, config)];
    }),
  );
  for (const name of secretSourceVars(
    d.secretKeys.filter((k) => !own.includes(k)),
    config,
  ))
    if (!keep.has(name)) delete childEnv[name];
  if (cli.viaDoor) {
    const door = await openAgentDoor(layout, config, rec, sendAs(layout, config, rec), {
      env: { ...childEnv, ...cli.busCreds },
      writable: [rec.cwd, cli.configDir],
      extra: VENDOR_DOOR_COMMANDS,
      hooksHere: true,
      warmAfter: d.execed,
    });
    if (!door)
      throw new CliRefused(
        `cannot open the agent's door at ${layout.door(rec.id)} (a path over the Unix socket limit?) — the CLI cannot reach the bus without it; use a shorter fleet root`,
      );
    Object.assign(childEnv, cli.doorEnv);
  }
  return childEnv;
}

/** Starts the CLI on its pane's terminal: in its sandbox, or plain. */
export async function startCli(d: {
  pane: CliPane;
  layout: Layout;
  config: Config;
  rec: AgentRecord;
  runtime: Runtime;
  env: NodeJS.ProcessEnv;
  childEnv: NodeJS.ProcessEnv;
  cli: PreparedCli;
  ending: AgentEnding;
  execed: Promise<boolean>;
}): Promise<Pick<StartedCli, 'exited'>> {
  const { cli, rec } = d;
  // Each process started is what a stop ends; ended while a refused start was made again, the new one ends too.
  const onChild = (c: CliProcess) => {
    d.ending.setChild(c, !!cli.bwrap);
    if (d.ending.current()) c.kill('SIGTERM');
  };
  if (cli.bwrap) {
    const contained = await containCli({
      layout: d.layout,
      config: d.config,
      rec,
      bwrap: cli.bwrap,
      runtime: d.runtime.name,
      shimEnv: d.env,
      cliEnv: d.childEnv,
      configDir: cli.configDir,
      bin: cli.bin,
      argv: cli.launch.argv,
      folderSettings: cli.folderSettings,
      loginDir: cli.mirror?.dir,
      execed: d.execed,
    });
    traceMark('shim: sandbox planned, door open');
    return startContained(d.pane, contained, rec.cwd, onChild);
  }
  const started = d.pane.start({ argv: [cli.bin, ...cli.launch.argv], env: d.childEnv, cwd: rec.cwd, marked: false });
  onChild(started.child);
  return started;
}
