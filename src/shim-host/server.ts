import { chmodSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { loadConfigCached } from '../config/cached.js';
import { resolveLayout, type Layout } from '../layout/layout.js';
import { CLI_ENTRY } from '../layout/package.js';
import { extraCaCertsBack } from '../extra-ca-certs.js';
import { mallocTunablesBack } from '../malloc-tunables.js';
import { traceMark } from '../trace.js';
import { answers } from '../socket-answers.js';
import { startClaim } from '../spawn/shim-host-process.js';
import { launcherPane, type PaneHello } from './launcher-pane.js';
import { warmAgentStart } from './warm.js';

/** How long the host stays with no agent: a parent's next spawn finds it started. */
export const SHIM_HOST_IDLE_MS = 30_000;

/**
 * The shim host (§13, docs/architecture.md "The shim host"): one Node process per fleet and machine that runs every
 * spawned vendor agent's shim — admission, the CLI's preparation, its door (MCP, hooks, fleet commands), its tending
 * and its end — while the agent's pane runs `tools/shim-pane`, a few MB of perl, as the CLI's parent. Each agent's
 * work takes its environment from its pane (CliPane.env), never from this process's. Listens at `socketPath` (in the
 * doors' folder: hidden in every sandbox) until it has had no agent for `idleMs`.
 */
export async function serveShimHost(
  layout: Layout,
  socketPath: string,
  opts: { idleMs?: number; log?: (line: string) => void } = {},
): Promise<{ closed: Promise<void> }> {
  const idleMs = opts.idleMs ?? SHIM_HOST_IDLE_MS;
  let agents = 0;
  let idle: NodeJS.Timeout | undefined;
  let retired = false;
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  const builtAt = buildStamp();
  const server = createServer((sock) => {
    // Rebuilt or upgraded since it started: its agents stay, a new host with the new code takes the next ones.
    if (buildStamp() !== builtAt) {
      if (!retired) opts.log?.('its code changed on disk: it takes no new agent and ends with its last');
      retire();
      sock.on('error', () => undefined);
      return void sock.end('RETRY 0\n');
    }
    agents++;
    if (idle) clearTimeout(idle);
    void hostPane(layout, sock).finally(() => {
      if (--agents === 0) idle = setTimeout(retire, retired ? 0 : idleMs);
    });
  });
  const retire = () => {
    if (!retired) {
      retired = true;
      try {
        unlinkSync(socketPath);
      } catch {
        /* gone */
      }
    }
    server.close();
    if (agents === 0) closed();
  };
  await listenOnce(server, socketPath);
  rmSync(startClaim(layout), { force: true });
  idle = setTimeout(retire, idleMs);
  void warmAgentStart();
  return { closed: done };
}

/** When the CLI this host runs was built: a rebuild or an upgrade changes it. */
function buildStamp(): number {
  try {
    return statSync(CLI_ENTRY).mtimeMs;
  } catch {
    return 0;
  }
}

/** Binds `path`, taking over a socket file left by a host that died; refuses when a live host answers there. */
async function listenOnce(server: Server, path: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(path, () => {
          server.off('error', reject);
          resolve();
        });
      });
      chmodSync(path, 0o600);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt > 0 || (await answers(path))) throw err;
      unlinkSync(path);
    }
  }
}

/** One pane's agent, from its hello to its end: its exit status goes back to the pane's process. */
async function hostPane(hostLayout: Layout, sock: Socket): Promise<void> {
  sock.on('error', () => undefined);
  const lines = createInterface({ input: sock, crlfDelay: Infinity })[Symbol.asyncIterator]();
  const first = await lines.next().catch(() => ({ done: true as const, value: undefined }));
  const hello = first.done ? undefined : helloOf(first.value);
  if (!hello) return void sock.destroy();
  // What its pane's sh set or kept aside for a Node start is its CLI's as the person's: the certificates back
  // (src/extra-ca-certs.ts), glibc's malloc defaults (src/malloc-tunables.ts).
  extraCaCertsBack(hello.env);
  mallocTunablesBack(hello.env);
  // bench/'s marks follow the pane that spawned last (src/trace.ts reads this process's FLOTILLA_TRACE).
  if (hello.env.FLOTILLA_TRACE) process.env.FLOTILLA_TRACE = hello.env.FLOTILLA_TRACE;
  traceMark('shim host: pane connected');
  const pane = launcherPane(sock, hello, { [Symbol.asyncIterator]: () => lines });
  const write = (text: string) => pane.say(text.replace(/\n$/, ''));
  let code: number;
  try {
    const layout = resolveLayout({ cwd: hello.cwd, env: hello.env });
    if (layout.root !== hostLayout.root)
      throw new Error(`this shim host serves ${hostLayout.root}, not ${layout.root}`);
    const loaded = await loadConfigCached(layout, {}, hello.env);
    for (const w of loaded.warnings) write(`flotilla: warning: ${w}`);
    const { runHarness } = await import('../harness/run.js');
    code = await runHarness({
      layout,
      config: loaded.config,
      spawnedId: hello.id,
      pane,
      stdinIsTTY: false,
      stdoutIsTTY: false,
    });
  } catch (err) {
    const { reportError } = await import('../error-report.js');
    code = reportError(err, write);
  }
  pane.exit(code);
}

function helloOf(line: string): PaneHello | undefined {
  try {
    const m = JSON.parse(line) as Partial<PaneHello>;
    if (m.op !== 'agent' || typeof m.id !== 'string' || typeof m.pid !== 'number' || typeof m.cwd !== 'string')
      return undefined;
    if (!m.env || typeof m.env !== 'object') return undefined;
    return m as PaneHello;
  } catch {
    return undefined;
  }
}
