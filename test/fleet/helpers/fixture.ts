import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FIXTURES } from './compile.js';

/** A running fixture script whose stdout lines can be awaited. */
export interface Fixture {
  child: ChildProcess;
  pid: number;
  lines: string[];
  /** Resolves the first line (seen so far or later) matching `pattern`. */
  waitLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  send(line: string): void;
  /** Resolves the exit code once the process has exited (and been reaped). */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
}

export function startFixture(script: string, args: string[], env: NodeJS.ProcessEnv): Fixture {
  const child = spawn(process.execPath, [join(FIXTURES, script), ...args], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve(l: string): void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.pattern.test(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    pid: child.pid!,
    lines,
    waitLine(pattern, timeoutMs = 60_000) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${script}: no line matching ${pattern}; got ${JSON.stringify(lines)}`)),
          timeoutMs,
        );
        waiters.push({ pattern, resolve: (l) => (clearTimeout(timer), resolve(l)) });
      });
    },
    send(line) {
      child.stdin!.write(`${line}\n`);
    },
    exited,
    kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}
