import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { selfProcess } from '../../fleet/proc.js';

/** A started CLI process: what a stop signals (by pid where it is not this process's child). */
export interface CliProcess {
  readonly pid?: number | undefined;
  kill(signal: NodeJS.Signals): void;
}

export interface CliExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What the pane is asked to start: the CLI, or the bubblewrap it runs in. */
export interface CliStart {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** bubblewrap's marked start (sandboxed-cli.ts `markedArgv`): one byte on fd 3 once the sandbox is made. */
  marked: boolean;
}

export interface StartedCli {
  child: CliProcess;
  /** True once the sandbox's byte came (an unmarked start: at once); false when it exited without. */
  began: Promise<boolean>;
  exited: Promise<CliExit>;
}

/**
 * The agent's pane as its shim sees it (§13): the terminal the vendor CLI runs on, the process that stands for the
 * agent (its record's pid), the environment the pane gave it, and how an end is asked from outside (a closed
 * window, a cancel). The shim runs in the pane's own process (`localPane`, a person's `flotilla run`) or in the
 * shim host, for a pane whose process is `tools/shim-pane` (shim-host/launcher-pane.ts).
 */
export interface CliPane {
  /** The environment the pane's process has: the tmux window's, the spawner's. */
  readonly env: NodeJS.ProcessEnv;
  /** The process that stands for the agent: its record's pid and the start time that makes it unique. */
  readonly process: { pid: number; start: string | null };
  /** One line for the person at the pane, before or beside the CLI's own drawing. */
  say(line: string): void;
  /** Heard once for each end asked from outside: `window closed`, `cancelled (SIGTERM)`. */
  onEnd(listener: (reason: string) => void): void;
  /** Starts the CLI on the pane's terminal. */
  start(cli: CliStart): StartedCli;
  /**
   * True once the pane's process is gone without the agent's end (SIGKILLed): the agent is then its pane's reaper's to
   * end, as a killed shim's was (spawn/pane-command.ts). Never for this process's own terminal.
   */
  lost?(): boolean;
}

/**
 * This process's own terminal: the CLI its child on the same terminal. Its signals from the first moment: the
 * terminal's Ctrl-C is the CLI's to handle; a cancel or a closed window ends both, even one closed while the CLI
 * starts.
 */
export function localPane(): CliPane {
  const heard: string[] = [];
  const listeners: ((reason: string) => void)[] = [];
  const tell = (reason: string) => {
    heard.push(reason);
    for (const l of listeners) l(reason);
  };
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => tell('cancelled (SIGTERM)'));
  process.on('SIGHUP', () => tell('window closed'));
  return {
    env: process.env,
    process: selfProcess(),
    say: (line) => void process.stderr.write(`${line}\n`),
    onEnd(listener) {
      listeners.push(listener);
      for (const r of heard) listener(r);
    },
    start: startHere,
  };
}

/** Starts the CLI as this process's child on its terminal. */
export function startHere(cli: CliStart): StartedCli {
  const [file, ...args] = cli.argv;
  const child = spawn(file!, args, {
    stdio: ['inherit', 'inherit', 'inherit', ...(cli.marked ? ['pipe' as const] : [])],
    cwd: cli.cwd,
    env: cli.env,
  });
  const exited = new Promise<CliExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: 127, signal: null }));
  });
  return { child, began: cli.marked ? markOf(child.stdio[3] as Readable) : Promise.resolve(true), exited };
}

/** The byte comes before bwrap exits; with none, the pipe closes only when bwrap has exited. */
function markOf(mark: Readable): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    mark.once('data', () => resolve(true));
    mark.once('close', () => resolve(false));
    mark.once('error', () => resolve(false));
  }).finally(() => mark.destroy());
}
