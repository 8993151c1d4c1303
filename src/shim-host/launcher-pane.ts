import type { Socket } from 'node:net';
import { constants } from 'node:os';
import { processStartTime } from '../fleet/proc.js';
import type { CliExit, CliPane, CliProcess, CliStart, StartedCli } from '../harness/cli-host/cli-pane.js';
import { sleep } from '../sleep.js';

/** What `tools/shim-pane` says first: the agent it stands for, its pid, folder and environment. */
export interface PaneHello {
  op: 'agent';
  id: string;
  pid: number;
  cwd: string;
  env: Record<string, string>;
}

/** How long a CLI left running by a pane process that died gets after SIGTERM before SIGKILL. */
const ORPHAN_KILL_MS = 3_000;

/**
 * An agent's pane whose process is `tools/shim-pane`, seen from the shim host (§13). The connection carries, from
 * the pane, one JSON object a line — `agent` (the hello), `started` (the CLI's pid), `began` (the sandbox's mark),
 * `exited` (the CLI's status), `signal` (HUP: the window closed; TERM: a cancel) — and to it, `W1 <n>` / `W2 <n>`
 * and n bytes for its stdout / stderr, `RUN <n>` and a plan (`tools/shim-pane` start_cli), `EXIT <code>`.
 * The pane's process gone without its CLI's exit said (SIGKILLed, or its window killed with it) is `lost`: the CLI
 * is stopped by pid, and the agent is the pane's reaper's to end (spawn/pane-command.ts), as a killed shim's was.
 */
export function launcherPane(
  sock: Socket,
  hello: PaneHello,
  lines: AsyncIterable<string>,
): CliPane & { lost(): boolean; exit(code: number): void } {
  const listeners: ((reason: string) => void)[] = [];
  const heard: string[] = [];
  let current: Current | undefined;
  let lost = false;
  const end = (reason: string) => {
    heard.push(reason);
    for (const l of listeners) l(reason);
  };
  const put = (text: string | Buffer) => {
    if (!sock.destroyed) sock.write(text);
  };
  void (async () => {
    try {
      for await (const line of lines) {
        const m = parse(line);
        if (!m) continue;
        if (m.op === 'signal') end(m.name === 'HUP' ? 'window closed' : `cancelled (SIG${String(m.name)})`);
        else if (m.op === 'started' && typeof m.pid === 'number') current?.started(m.pid);
        else if (m.op === 'began') current?.began(m.ok === true);
        else if (m.op === 'exited') current?.exited(exitOf(m.code, m.signal));
      }
    } catch {
      /* the connection failed: as closed */
    }
    if (!current?.done) {
      lost = true;
      // What tends the agent stops as for any end; the agent itself is its pane's reaper's to end.
      end('its pane process ended');
      await current?.orphaned();
    }
  })();
  return {
    env: hello.env,
    process: { pid: hello.pid, start: processStartTime(hello.pid) },
    say: (line) => put(frame('W2', `${line}\n`)),
    onEnd(listener) {
      listeners.push(listener);
      for (const r of heard) listener(r);
    },
    start(cli) {
      if (lost) return { child: { kill: () => undefined }, began: Promise.resolve(false), exited: gone() };
      current = startThere(cli, put);
      return current.cli;
    },
    lost: () => lost,
    exit(code) {
      put(`EXIT ${code}\n`);
      sock.end();
    },
  };
}

interface Current {
  cli: StartedCli;
  done: boolean;
  started(pid: number): void;
  began(ok: boolean): void;
  exited(exit: CliExit): void;
  /** The pane's process is gone and the CLI may still run: stopped by pid, then taken as exited. */
  orphaned(): Promise<void>;
}

function startThere(cli: CliStart, put: (b: Buffer | string) => void): Current {
  let pid: number | undefined;
  let pendingKill: NodeJS.Signals | undefined;
  let began!: (ok: boolean) => void;
  let exited!: (exit: CliExit) => void;
  const state: Current = {
    done: false,
    cli: {
      child: {
        get pid() {
          return pid;
        },
        kill(signal) {
          if (pid === undefined) pendingKill = signal;
          else signalQuietly(pid, signal);
        },
      } satisfies CliProcess,
      began: new Promise((resolve) => (began = resolve)),
      exited: new Promise((resolve) => (exited = resolve)),
    },
    started(p) {
      pid = p;
      if (pendingKill) signalQuietly(p, pendingKill);
      if (!cli.marked) began(true);
    },
    began: (ok) => began(ok),
    exited(exit) {
      state.done = true;
      began(false);
      exited(exit);
    },
    async orphaned() {
      if (pid !== undefined && alive(pid)) {
        signalQuietly(pid, 'SIGTERM');
        for (const until = Date.now() + ORPHAN_KILL_MS; alive(pid) && Date.now() < until;) await sleep(50);
        signalQuietly(pid, 'SIGKILL');
      }
      state.exited({ code: null, signal: 'SIGKILL' });
    },
  };
  put(frame('RUN', plan(cli)));
  return state;
}

/** `tools/shim-pane`'s plan: folder, mark, argv's length, argv, then KEY=VALUE, NUL-separated. */
function plan(cli: CliStart): Buffer {
  const env = Object.entries(cli.env).flatMap(([k, v]) => (v === undefined || k.includes('\0') ? [] : [`${k}=${v}`]));
  return Buffer.from([cli.cwd, cli.marked ? '1' : '0', String(cli.argv.length), ...cli.argv, ...env].join('\0'));
}

function frame(what: string, body: string | Buffer): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return Buffer.concat([Buffer.from(`${what} ${bytes.length}\n`), bytes]);
}

function parse(line: string): Record<string, unknown> | undefined {
  try {
    const m = JSON.parse(line) as unknown;
    return m && typeof m === 'object' ? (m as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function exitOf(code: unknown, signal: unknown): CliExit {
  const n = typeof signal === 'number' && signal > 0 ? signal : 0;
  const name = n ? (Object.entries(constants.signals).find(([, v]) => v === n)?.[0] as NodeJS.Signals) : null;
  return { code: typeof code === 'number' ? code : null, signal: name ?? null };
}

function gone(): Promise<CliExit> {
  return Promise.resolve({ code: null, signal: 'SIGKILL' });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    /* ended */
  }
}
