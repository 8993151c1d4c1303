import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Layout } from '../layout/layout.js';
import { sleep } from '../sleep.js';
import type { Runtime } from './types.js';

/** What the fleet takes from a vendor CLI's own model catalogue (docs/runtimes.md, "Codex's model catalogue"). */
export interface FleetCatalog {
  /** Old model → its upgrade: the CLI is told the "meet the new model" dialog was seen. */
  upgrades: Record<string, string>;
  /**
   * The catalogue the CLI is given instead of its own, with its own sub-agents off; undefined when it could not be
   * made.
   */
  file?: string;
}

/**
 * Asks the CLI itself for its catalogue (`runtime.modelCatalog`), once per installed binary,
 * and keeps what the fleet needs of it in the fleet's index, keyed by the binary's identity:
 * a later spawn reads two files instead of starting the CLI. The catalogue file lives in the
 * fleet root, which every agent's sandbox can read. Anything unexpected (the command fails,
 * its output changed shape) gives no upgrades and no file: the agent then starts on the CLI's
 * own catalogue, and the shim says what that means (harness/cli-host/cli-launch.ts).
 * The spawner asks first, beside opening the window (spawn/launch.ts), and the shim finds it
 * kept; one process asks at a time (`<runtime>-model-catalog.asking` names it), and the others
 * wait for its answer instead of starting the CLI again.
 */
export async function fleetCatalog(
  layout: Layout,
  runtime: Runtime,
  bin: string,
  env: NodeJS.ProcessEnv,
  configDir: string,
): Promise<FleetCatalog> {
  const catalog = runtime.modelCatalog;
  if (!catalog) return { upgrades: {} };
  const index = join(layout.indexDir, `${runtime.name}-model-catalog.json`);
  const file = join(layout.indexDir, `${runtime.name}-models.json`);
  const asking = join(layout.indexDir, `${runtime.name}-model-catalog.asking`);
  const key = binaryId(bin);
  const kept = () => {
    try {
      const k = JSON.parse(readFileSync(index, 'utf8')) as { key?: string; upgrades?: Record<string, string> };
      if (k.key === key && k.upgrades && existsSync(file)) return { upgrades: k.upgrades, file };
    } catch {
      /* none yet, or unreadable: ask the CLI */
    }
    return undefined;
  };
  const known = kept();
  if (known) return known;
  const mine = await takeTurn(asking);
  try {
    const answered = mine ? kept() : undefined;
    if (answered) return answered;
    const stdout = await new Promise<string | undefined>((resolve) => {
      execFile(
        bin,
        catalog.argv,
        { env: { ...env, ...catalog.env(configDir) }, timeout: ASK_MS, maxBuffer: 64 * 1024 * 1024 },
        (err, out) => resolve(err ? undefined : out),
      );
    });
    const upgrades = stdout === undefined ? undefined : catalog.upgrades(stdout);
    const text = stdout === undefined ? undefined : catalog.forFleet(stdout);
    if (!upgrades || !text) return { upgrades: upgrades ?? {} };
    try {
      mkdirSync(layout.indexDir, { recursive: true });
      // The catalogue first: the index names a key only once its file is whole.
      replace(file, text);
      replace(index, JSON.stringify({ key, upgrades }) + '\n');
    } catch {
      return { upgrades }; // the next spawn asks again
    }
    return { upgrades, file };
  } finally {
    if (mine)
      try {
        unlinkSync(asking);
      } catch {
        /* gone already */
      }
  }
}

/** How long the CLI has to answer (and another process's asking is waited for, beside a little more). */
const ASK_MS = 30_000;

/**
 * This process's turn to ask: true once it holds the `asking` file (after waiting while a live
 * process held it), false where the file cannot be made (a read-only fleet root): then it asks
 * without it, as before there was one.
 */
async function takeTurn(asking: string): Promise<boolean> {
  const end = Date.now() + ASK_MS + 5_000;
  for (;;) {
    try {
      mkdirSync(join(asking, '..'), { recursive: true });
      writeFileSync(asking, `${process.pid}\n`, { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return false;
    }
    const holder = readText(asking);
    // Held by a process that ended without letting go (or past every bound): taken over. Empty: its holder is writing
    // it.
    if ((holder !== '' && !alive(Number(holder))) || Date.now() > end) {
      try {
        unlinkSync(asking);
      } catch {
        /* another waiter took it over first */
      }
      continue;
    }
    await sleep(25);
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function replace(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** The binary as installed: a new version (or another install) is another catalogue. */
export function binaryId(bin: string): string {
  try {
    const st = statSync(bin, { bigint: true });
    return `${bin}:${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch {
    return bin;
  }
}
