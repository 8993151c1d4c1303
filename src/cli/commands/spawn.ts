import { cliConfig, contextOf, type Globals } from '../context.js';
import { guardStderr, guardStdout } from '../output.js';
import type { CommandSpec, Parsed } from '../spec.js';
import { statusWithReason } from '../../fleet/record-status.js';
import { traceMark } from '../../trace.js';

interface SpawnOpts {
  agent?: string;
  id?: string;
  prompt?: string;
  cwd?: string;
  worktree?: boolean;
  oneshot?: boolean;
  wait?: boolean;
  session?: boolean;
  background?: boolean;
  queue?: boolean;
  context?: 'none' | 'last_turn' | 'summary';
  model?: string;
  runtime?: 'flotilla' | 'claude' | 'codex' | 'gemini';
  json?: boolean;
  board?: string;
  autoClaim?: boolean;
  host?: string;
  lineage?: string;
}

/**
 * `flotilla spawn` = `spawn-agent` (§5): open an agent and print its id. Called by agents'
 * shells all the time, so it runs on the fast path (fast.ts: its own bundle, read through V8's
 * code cache, no commander) and the top of this file imports nothing heavy (§14).
 */
export const spec: CommandSpec = {
  name: 'spawn',
  fast: true,
  description: 'open an agent in its own tmux window (or --background) and print its id; the same as spawn-agent',
  args: [{ name: '[prompt...]', description: 'the task (default: stdin when it is not a terminal)' }],
  options: [
    { flags: '--agent <name>', description: 'definition to run (default: agents.default)' },
    { flags: '--id <id>', description: 'choose the agent id' },
    { flags: '--prompt <text>', description: 'the task, instead of arguments' },
    { flags: '--cwd <dir>', description: "the agent's working directory (default: the parent's, or here)" },
    { flags: '--worktree', description: 'give the agent its own git worktree and branch flotilla/<id>' },
    { flags: '--oneshot', description: 'exit after the task (the dead pane stays readable)' },
    {
      flags: '--wait',
      description: "block until the agent's task ends, print its answer; exit 0 only if it completed",
    },
    { flags: '--session', description: 'open in its own detached tmux session' },
    { flags: '--background', description: 'no tmux: a detached headless process writing to its log' },
    {
      flags: '--queue',
      description: 'when every running slot is busy, wait in line for one instead of being refused',
    },
    {
      flags: '--context <mode>',
      description: "what of the parent's conversation the child gets",
      choices: ['none', 'last_turn', 'summary'],
    },
    { flags: '--model <spec>', description: 'model as provider:model-id, an alias, or script:<file.yaml>' },
    {
      flags: '--runtime <name>',
      description:
        "what runs the agent: Flotilla's harness, or Claude Code / Codex / Gemini CLI under a Flotilla shim (default: the definition's runtime:, else flotilla)",
      choices: ['flotilla', 'claude', 'codex', 'gemini'],
    },
    {
      flags: '--board <name>',
      description:
        "the task board it works from (default: the definition's, its parent's, $FLOTILLA_BOARD, else 'fleet')",
    },
    {
      flags: '--auto-claim',
      description:
        'a teammate: whenever idle it claims the next task on its board and works it (the prompt is then optional)',
    },
    { flags: '--json', description: 'print the registry record (with --wait: the result) as JSON' },
    {
      flags: '--host <name>',
      description:
        "open it on a remote host from hosts: in the config, through ssh (default: the definition's host:; local: here)",
    },
    // Written by another host's Flotilla over ssh for an agent's child (§17.5); refused from any agent.
    { flags: '--lineage <json>', description: '', hidden: true },
  ],
};

export async function run(parsed: Parsed, globals: Globals): Promise<void> {
  // As the full CLI's start does (start.ts): a spawn detached from the shell that started it still spawns.
  guardStdout();
  guardStderr();
  await spawnAction((parsed.args[0] as string[] | undefined) ?? [], parsed.opts as unknown as SpawnOpts, globals);
}

type Layout = import('../../layout/layout.js').Layout;
type Config = import('../../config/schema.js').Config;

async function spawnAction(words: string[], opts: SpawnOpts, globals: Globals): Promise<void> {
  traceMark('spawn: command runs');
  const { layout } = contextOf(globals);
  // Asked before the config is read: a yes changes what it says (docs/security-trust.md "Folder trust").
  await (await import('../trust-prompt.js')).settleTrust(layout);
  const { config } = await cliConfig(layout);
  traceMark('spawn: config read');
  // A person's spawn says once when `auto` found no sandbox; an agent's model would only read it as noise.
  // Probed beside the spawn's own work; said before the spawn's answer or its error.
  const warning = process.env.FLOTILLA_AGENT_ID
    ? Promise.resolve(null)
    : (await import('../../tools/sandbox-mode.js')).sandboxWarningSoon(config);
  const warned = warning.then((line) => {
    if (line) process.stderr.write(`${line}\n`);
  });
  try {
    await spawnOn(layout, config, words, opts, warned);
  } catch (err) {
    await warned;
    throw err;
  }
}

async function spawnOn(
  layout: Layout,
  config: Config,
  words: string[],
  opts: SpawnOpts,
  warned: Promise<void>,
): Promise<void> {
  const { UsageError } = await import('../../errors.js');
  const prompt = opts.prompt ?? (words.length ? words.join(' ') : await readStdin());
  // An agent opened with nothing to do only sits there; refused before anything opens.
  // A mistake in how it was called: exit 2, with --wait as without (§2).
  // A teammate (--auto-claim, or a definition's auto_claim) may start with nothing: the board is its work (§15).
  if (!prompt.trim() && (opts.wait || !(opts.autoClaim || (await definesAutoClaim(layout, config, opts.agent))))) {
    throw new UsageError(
      "spawn refused: no task given — pass it as arguments, with --prompt, or on stdin (echo 'task' | spawn-agent); for an agent to talk to, use flotilla up or flotilla run; for a teammate that takes its work from the task board, --auto-claim",
      { code: 'empty-prompt' },
    );
  }
  if (opts.host && opts.host !== 'local') {
    await warned;
    return spawnElsewhere(layout, config, opts.host, opts, prompt);
  }
  const rec = await spawnHere(layout, config, opts, prompt, warned);
  await warned;
  if (!opts.wait) {
    const { printJson } = await import('../output.js');
    if (opts.json) printJson(rec);
    else process.stdout.write(rec.id + '\n');
    process.exit(0);
  }
  await waitAndPrint(layout, config, rec, opts);
}

/** Opens the agent on this host (or where its definition's `host:` says) and returns its record. */
async function spawnHere(
  layout: Layout,
  config: Config,
  opts: SpawnOpts,
  prompt: string,
  warned: Promise<void>,
): Promise<import('../../fleet/record.js').AgentRecord> {
  const [{ spawnAgent }, { deadPossible }] = await Promise.all([
    import('../../spawn/spawn.js'),
    import('../../lifecycle/dead-possible.js'),
  ]);
  const lineage =
    opts.lineage === undefined
      ? undefined
      : await (await import('../../hosts/remote-child.js')).acceptLineage(layout, config, opts.lineage);
  // Dead agents give back their slots before this one asks for one; with none, the reaper is not loaded.
  if (deadPossible(layout)) await (await import('../../lifecycle/reconcile.js')).reconcileDead(layout, config);
  traceMark('spawn: fleet reconciled');
  return spawnAgent(
    layout,
    config,
    {
      ...(opts.host === 'local' ? { here: true } : {}),
      prompt,
      agent: opts.agent,
      id: opts.id,
      cwd: opts.cwd,
      context: opts.context,
      model: opts.model,
      runtime: opts.runtime,
      mode: opts.oneshot ? 'oneshot' : 'interactive',
      board: opts.board,
      ...(opts.autoClaim ? { autoClaim: true } : {}),
      ...(opts.queue ? { queue: { onWait: () => sayWaiting(layout, config) } } : {}),
    },
    {
      session: opts.session,
      background: opts.background,
      worktree: opts.worktree,
      ...(lineage ? { lineage } : {}),
    },
  ).catch(async (err: unknown) => {
    // Its definition's host: names another machine: the spawn goes there (§17).
    const { DefinitionElsewhere } = await import('../../spawn/prepare.js');
    if (err instanceof DefinitionElsewhere) {
      await warned;
      return spawnElsewhere(layout, config, err.host, { ...opts, agent: err.definition }, prompt);
    }
    throw err;
  });
}

/** `--queue`: the line a spawn waiting for a running slot prints. */
async function sayWaiting(layout: Layout, config: Config): Promise<void> {
  const max = config.limits.max_running;
  // The fleet's count on a bus with fleet-wide caps (§18), the host's own otherwise.
  const held =
    config.fleet.bus === 'maildir'
      ? (await import('../../fleet/slots.js')).countHeld(layout, max)
      : (await import('../../bus/open.js')).busFor(layout, config).caps.countSlots(max);
  process.stderr.write(
    `flotilla: waiting for a slot ${await held}/${max} (limits.max_running) — in line, first come first served\n`,
  );
}

/** `--wait`: waits for this spawn's task to end, prints its answer and exits 0 only if it completed. */
async function waitAndPrint(
  layout: Layout,
  config: Config,
  rec: import('../../fleet/record.js').AgentRecord,
  opts: SpawnOpts,
): Promise<never> {
  const [{ waitForAgents }, { approvalNotice }, { printJson }] = await Promise.all([
    import('../../lifecycle/wait.js'),
    import('../../approvals/notice.js'),
    import('../output.js'),
  ]);
  // This spawn's task, not whatever task the agent is on when the wait looks (it may have had mail since).
  const { results } = await waitForAgents(layout, config, [rec.id], {
    tasks: { [rec.id]: rec.task },
    onApproval: (asking) => void approvalNotice(layout, asking).then((line) => process.stderr.write(line + '\n')),
  });
  const result = results[0]!;
  // Handed on to whoever spawned it: the agent whose shell ran this (its parent), or a person.
  await (await import('../../lifecycle/handed-on.js')).markHandedOn(layout, rec.parentId ?? 'human', results);
  // A one-shot's answer comes just before its harness ends its record: return once it has, so
  // `status` right after says how it ended — within a bound, never hanging on a stuck harness.
  if (rec.mode !== 'interactive' && !rec.autoClaim && result.status !== 'lost') {
    const { awaitRecordEnd, RECORD_END_BOUND_MS } = await import('../../lifecycle/record-end.js');
    const { ended, record } = await awaitRecordEnd(layout, config, rec.id);
    if (!ended && record)
      process.stderr.write(
        `flotilla: ${rec.id} answered, but its harness (pid ${record.pid}) has not ended it after ${RECORD_END_BOUND_MS / 1000} s — status shows it ${record.status} until it does; flotilla cancel ${rec.id} ends it\n`,
      );
  }
  if (opts.json) printJson(result);
  else if (result.output) process.stdout.write(result.output.endsWith('\n') ? result.output : result.output + '\n');
  if (result.status !== 'completed')
    process.stderr.write(
      `flotilla: ${rec.id} ended ${statusWithReason(result.status, result.exitReason)} — its transcript: flotilla transcript ${rec.id}\n`,
    );
  process.exit(result.status === 'completed' ? 0 : 1);
}

/** `--host NAME` or a definition's `host:` (§17): the spawn runs on that host; exits with its status. */
async function spawnElsewhere(
  layout: Layout,
  config: Config,
  host: string,
  opts: SpawnOpts,
  prompt: string,
): Promise<never> {
  const { UsageError } = await import('../../errors.js');
  if (opts.context && opts.context !== 'none')
    throw new UsageError(
      "spawn refused: --context needs the parent's conversation, which stays on this host — leave --context out with --host",
      { code: 'host-context' },
    );
  if (opts.lineage !== undefined)
    throw new UsageError('spawn refused: a spawn that came from another host opens here — drop --host', {
      code: 'host-hop',
    });
  const { spawnRemote } = await import('../../hosts/remote-spawn.js');
  process.exit(await spawnRemote(layout, config, host, opts, prompt));
}

/** Whether the definition a spawn names says `auto_claim: true` (asked only when no task is given). */
async function definesAutoClaim(layout: Layout, config: Config, agent: string | undefined): Promise<boolean> {
  const { loadDefinitions, pickDefinition } = await import('../../definitions/load.js');
  try {
    return pickDefinition(await loadDefinitions({ layout, config }), agent ?? config.agents.default).autoClaim === true;
  } catch {
    // An unknown definition is the spawn's to refuse, with its own message.
    return true;
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
