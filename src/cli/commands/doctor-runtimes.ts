import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_ENTRY } from '../../layout/package.js';
import { PERMISSION_MODES, type PermissionMode } from '../../policy/permission-mode.js';
import { locateRuntimeBinary } from '../../runtimes/binary.js';
import { BUILT_RUNTIMES, loadRuntime, type VendorRuntimeName } from '../../runtimes/index.js';
import { startProbeServer } from '../../runtimes/probe-server.js';
import type { Check } from './doctor-checks.js';

/** How long the probe waits for one CLI's starts to reach the model. */
const PROBE_SECS = 40;

/** The spawner's environment that points each CLI at the probe server with a key naming the mode. */
const POINT: Record<VendorRuntimeName, (url: string, key: string) => Record<string, string>> = {
  claude: (url, key) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: `sk-ant-api03-${key}-0000000000` }),
  codex: (url, key) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: `sk-${key}` }),
  gemini: (url, key) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: key }),
};

/**
 * `flotilla doctor --runtimes` (docs/runtimes.md, "Which CLI runs"): every vendor CLI found is
 * spawned in every permission mode, as the runtime tests spawn it — a fresh project, a fresh
 * HOME, an API key in the environment, the fleet's own tmux server — against a local stand-in
 * for its API (runtimes/probe-server.ts), and each start is reported by whether its first
 * model request arrived. Nothing of the person's fleet, home or keys is used.
 */
export async function probeRuntimes(env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
  const found: { name: VendorRuntimeName; bin: string; binEnv: string }[] = [];
  for (const name of BUILT_RUNTIMES) {
    const rt = await loadRuntime(name);
    const at = locateRuntimeBinary(rt, env);
    if (at) found.push({ name, bin: at.path, binEnv: rt.binEnv });
  }
  if (!found.length)
    return [
      {
        name: 'runtimes',
        ok: true,
        warn: true,
        detail: 'no vendor CLI found to probe',
        fix: 'install one (npm install -g @anthropic-ai/claude-code, @openai/codex or @google/gemini-cli)',
      },
    ];
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-probe-'));
  const server = await startProbeServer();
  const sockets: string[] = [];
  // Where the probe's tmux servers live: the person's TMUX_TMPDIR, for the spawns and the kill alike.
  const tmuxEnv: NodeJS.ProcessEnv = { ...env };
  delete tmuxEnv.TMUX;
  try {
    const project = join(dir, 'project');
    const home = join(dir, 'home');
    const agents = join(project, '.flotilla', 'agents');
    mkdirSync(agents, { recursive: true });
    mkdirSync(home);
    writeFileSync(
      join(project, '.flotilla', 'config.yaml'),
      'agents:\n  allow_bypass_permissions: true\nlimits:\n  max_running: 16\n',
    );
    for (const f of found) {
      for (const mode of PERMISSION_MODES) {
        writeFileSync(
          join(agents, `${f.name}-${mode.replace('_', '-')}.md`),
          `---\nname: ${f.name}-${mode.replace('_', '-')}\ndescription: probe of ${f.name} in ${mode}\nruntime: ${f.name}\npermission_mode: ${mode}\n---\nAnswer in one word.\n`,
        );
      }
    }
    // Only the probe's own: no identity of a calling agent, no provider keys of the person's.
    const base: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(env))
      if (!/^(FLOTILLA_|TMUX$|TMUX_PANE$|ANTHROPIC_|OPENAI_|CODEX_|GEMINI_|GOOGLE_)/.test(k)) base[k] = v;
    Object.assign(base, {
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_CACHE_HOME: join(home, '.cache'),
      NO_COLOR: '1',
    });
    // The project's own config allows bypass_permissions, which only a trusted folder may say.
    spawnSync(process.execPath, [CLI_ENTRY, 'trust', project], { cwd: project, env: base, stdio: 'ignore' });
    // One CLI at a time, its five modes at once, each on its own tmux server ended after it:
    // fifteen CLIs starting together overload a small machine, and a slow start is not a failure.
    const out: Check[] = [];
    for (const f of found) {
      const socket = `flotilla-probe-${process.pid}-${f.name}`;
      sockets.push(socket);
      const starts = PERMISSION_MODES.map((mode) => ({
        mode,
        point: POINT[f.name](server.url, `flotilla-probe-${f.name}-${mode.replace('_', '-')}`),
      })).map((s) => ({ ...s, key: s.point.ANTHROPIC_API_KEY ?? s.point.OPENAI_API_KEY ?? s.point.GEMINI_API_KEY! }));
      const refused = await Promise.all(
        starts.map((s) =>
          spawnOne(project, { ...base, FLOTILLA_TMUX_SOCKET: socket, [f.binEnv]: f.bin, ...s.point }, f.name, s.mode),
        ),
      );
      const end = Date.now() + PROBE_SECS * 1000;
      while (Date.now() < end && starts.some((s, i) => refused[i] === '' && !server.reached.has(s.key)))
        await new Promise((r) => setTimeout(r, 250));
      endServer(socket, tmuxEnv);
      const ok = starts.filter((s) => server.reached.has(s.key)).map((s) => s.mode);
      const bad = starts
        .map((s, i) => ({ s, err: refused[i]! }))
        .filter(({ s }) => !server.reached.has(s.key))
        .map(({ s, err }) => `${s.mode}${err ? ` (spawn refused: ${err})` : ''}`);
      out.push({
        name: `runtime ${f.name} modes`,
        ok: bad.length === 0,
        detail: `reach the model: ${ok.length ? ok.join(', ') : 'none'}${bad.length ? `; no request within ${PROBE_SECS} s: ${bad.join(', ')}` : ''} (${f.bin})`,
        fix: `spawn one in a mode that failed and look at its pane (spawn-agent --runtime ${f.name} 'Say ok.'); a CLI at another version than the tested one may stop at a new prompt`,
      });
    }
    return out;
  } finally {
    for (const socket of sockets) endServer(socket, tmuxEnv);
    await server.close();
    // Harnesses finish their last writes after their panes go.
    await new Promise((r) => setTimeout(r, 1000));
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
}

/**
 * Ends a probe's tmux server and removes its socket file, which tmux 3.3 leaves behind: each
 * run left three in the person's tmux folder.
 */
function endServer(socket: string, env: NodeJS.ProcessEnv): void {
  spawnSync('tmux', ['-L', socket, 'kill-server'], { env, stdio: 'ignore' });
  const dir = join(env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid?.() ?? 0}`);
  for (const f of [socket, `${socket}.lock`]) rmSync(join(dir, f), { force: true });
}

/** Spawns one probe agent; '' when the spawn was accepted, else its one-line refusal. */
function spawnOne(
  project: string,
  env: NodeJS.ProcessEnv,
  name: VendorRuntimeName,
  mode: PermissionMode,
): Promise<string> {
  const def = `${name}-${mode.replace('_', '-')}`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_ENTRY, 'spawn', '--agent', def, '--id', def, 'Say ok.'],
      { cwd: project, env, timeout: 30_000 },
      (err, _out, stderr) => {
        resolve(err ? (stderr.trim().split('\n').pop() ?? err.message) : '');
      },
    );
  });
}
