import { z } from 'zod';
import { runInProcessGroup, type GroupRunOptions, type GroupRunResult } from './process-group.js';
import type { Tool } from './types.js';
import type { PaneStyle, ToolSpec } from './spec.js';

/**
 * shell {command, timeout_secs?}: `sh -c` in its own process group, stdin closed, stdout and
 * stderr in one stream, the exit code reported; a timeout or an aborted turn kills the whole
 * group (§6). The sandbox wrapper (§11) plugs in as a hook. The shell gate (§7) is not here:
 * the harness decides every call once, before it reaches the tool (src/policy/decide.ts).
 */

/** Runs argv in a process group; the default is the local machine. */
export interface ShellOperations {
  run(argv: readonly string[], opts: GroupRunOptions): Promise<GroupRunResult>;
}

export const nodeShellOperations: ShellOperations = { run: runInProcessGroup };

export interface ShellOptions {
  /** Default timeout of one command (config `tools.shell_timeout_secs`, default 120). */
  timeoutSecs: number;
  /** Largest timeout_secs a call may ask for (default: the larger of 600 and timeoutSecs). */
  maxTimeoutSecs?: number;
  /** Environment of every command: the harness's own, injected. */
  env: NodeJS.ProcessEnv;
  /** Rewrites the argv before spawning: a pid namespace or bubblewrap, under the namespace init (tools/sandbox.ts). */
  wrap?: (argv: string[]) => string[];
  /** Between SIGTERM and SIGKILL when killing the group (default 2000 ms). */
  killGraceMs?: number;
  /** Output kept in memory per command, head and tail (default 1 MiB). */
  maxCaptureBytes?: number;
  /** Told of each command's process group (the harness records them for the reaper). */
  track?: GroupRunOptions['track'];
}

export function createShellTool(options: ShellOptions, ops: ShellOperations = nodeShellOperations): Tool<ShellInput> {
  const maxTimeoutSecs = options.maxTimeoutSecs ?? Math.max(600, options.timeoutSecs);
  const input = shellInput(options.timeoutSecs, maxTimeoutSecs);
  return {
    name: 'shell',
    klass: 'exec',
    description:
      'Run a command with sh -c in your working directory and get its combined stdout+stderr and exit code. ' +
      `No stdin (it is closed): never start interactive programs. Killed after timeout_secs (default ${options.timeoutSecs}). ` +
      'Each call is a fresh shell: cd and variables do not carry over. ' +
      'Example: {"command": "npm test 2>&1 | tail -n 40", "timeout_secs": 300}.',
    inputSchema: input,
    inputExample: { command: 'git status --short' },
    outputHint:
      'To see all of it, redirect the output to a file (cmd > out.txt 2>&1) and read it with offset/limit, or filter it with grep, head or tail.',
    async execute({ command, timeout_secs }, ctx) {
      const timeoutSecs = timeout_secs ?? options.timeoutSecs;
      // One pipe for both streams keeps stdout and stderr in the order the command wrote them.
      const argv = ['sh', '-c', `exec 2>&1; ${command}`];
      const run = () =>
        ops.run(options.wrap ? options.wrap(argv) : argv, {
          cwd: ctx.cwd,
          env: ctx.extraEnv ? { ...options.env, ...ctx.extraEnv } : options.env,
          timeoutMs: timeoutSecs * 1000,
          signal: ctx.signal,
          // Every wrapper (pid namespace, sandbox) runs the command under the namespace init.
          ...(options.wrap ? { statusFd: true } : {}),
          ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
          ...(options.maxCaptureBytes === undefined ? {} : { maxCaptureBytes: options.maxCaptureBytes }),
          ...(options.track ? { track: options.track } : {}),
        });
      let r = await run();
      // bubblewrap refused its mounts before the command began: a directory it was to hide
      // went away meanwhile (a tmux server's, removed as it ended). A fresh wrap looks again.
      if (sandboxRefused(r)) r = await run();
      const meta = {
        command,
        exitCode: r.exitCode,
        signal: r.exitSignal,
        timedOut: r.timedOut,
        aborted: r.aborted,
        outputBytes: r.outputBytes,
        durationMs: r.durationMs,
      };
      if (r.spawnError !== undefined) {
        return {
          output: `Could not start the command in ${ctx.cwd}: ${r.spawnError}. Check that the working directory exists.`,
          isError: true,
          meta,
        };
      }
      const body = r.output === '' ? '(no output)' : r.output.replace(/\n$/, '');
      return { output: `${body}\n${footer(r, timeoutSecs, maxTimeoutSecs)}`, isError: r.timedOut || r.aborted, meta };
    },
  };
}

function shellInput(defaultSecs: number, maxSecs: number) {
  return z.strictObject({
    command: z.string().trim().min(1).describe('Shell command line, run with sh -c'),
    timeout_secs: z
      .number()
      .positive()
      .max(maxSecs)
      .optional()
      .describe(`Seconds before the command is killed (default ${defaultSecs}, at most ${maxSecs})`),
  });
}
export type ShellInput = z.infer<ReturnType<typeof shellInput>>;

/** bubblewrap itself failed, before the command began (its own `bwrap: …` line, no status from the init). */
function sandboxRefused(r: GroupRunResult): boolean {
  return r.wrapperFailed === true && r.output.startsWith('bwrap: ');
}

function footer(r: GroupRunResult, timeoutSecs: number, maxSecs: number): string {
  if (r.aborted) return '[cancelled: the turn was aborted, so the command and every process it started were killed]';
  if (r.timedOut) {
    return (
      `[timed out after ${timeoutSecs} s: the command and every process it started were killed. ` +
      `Pass a larger timeout_secs (at most ${maxSecs}), or start long jobs in the background with output redirected to a file ` +
      '(nohup cmd > job.log 2>&1 &) and read the file later.]'
    );
  }
  if (sandboxRefused(r))
    return `[the sandbox could not start the command, so nothing ran (exit code ${r.exitCode ?? 'unknown'})]`;
  const end = r.exitSignal ? `[killed by signal ${r.exitSignal}]` : `[exit code ${r.exitCode ?? 'unknown'}]`;
  if (!r.heldOpen) return end;
  return `${end}\n[processes it started in the background still hold its output; what they print from now on is not captured. Redirect their output to a file to keep it.]`;
}

/** Output lines of a shell command shown in the pane before "… (N more lines)". */
const PREVIEW_LINES = 5;

// The footer above: `[exit code N]`, `[timed out …]`, `[cancelled …]`, `[killed …]`.
const FOOTER = /^\[(exit code|timed out|cancelled|killed by signal|processes it started)/;

/** The pane shows a command's first lines, then any footer but a clean exit's. */
function paneResult(result: { output: string; isError?: boolean }, pane: PaneStyle): string[] {
  const all = pane.sanitize(result.output).replace(/\n+$/, '').split('\n');
  const footer: string[] = [];
  while (all.length > 0 && FOOTER.test(all.at(-1) ?? '')) footer.unshift(all.pop()!);
  const body = all.length === 1 && all[0] === '(no output)' ? [] : all;
  const lines = body.slice(0, PREVIEW_LINES).map((l) => pane.dim(pane.fit(`  ${l}`)));
  if (body.length > PREVIEW_LINES) lines.push(pane.dim(`  … (${body.length - PREVIEW_LINES} more lines)`));
  for (const f of footer) {
    // A clean exit needs no line; anything else is worth a person's attention.
    if (f === '[exit code 0]') continue;
    lines.push(pane.red(pane.fit(`  ${f}`)));
  }
  if (result.isError && footer.length === 0) lines.push(pane.red('  ✗ shell failed'));
  return lines;
}

export const shellTool: ToolSpec = {
  name: 'shell',
  paneLine: (i) => `$ ${i.text('command', '')}`,
  paneResult,
  create: ({ workspace: w }) =>
    w &&
    (createShellTool(
      {
        timeoutSecs: w.shellTimeoutSecs,
        env: w.env,
        ...(w.wrap ? { wrap: w.wrap } : {}),
        ...(w.track ? { track: w.track } : {}),
      },
      w.shellOperations ?? nodeShellOperations,
    ) as Tool),
};
