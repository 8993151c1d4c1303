import { execa, type ResultPromise } from 'execa';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { readRecord } from '../../src/fleet/registry.js';
import type { AgentRecord } from '../../src/fleet/record.js';
import type { Layout } from '../../src/layout/layout.js';
import { CLI, flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { trustProject } from '../helpers/trust.js';

/**
 * A real project for end-to-end tests of one agent run by the built CLI: definitions in
 * `.flotilla/agents/`, a config, scripted models; every process gets an environment with
 * no agent identity in it (the test runner is a person).
 */
export interface Project extends TempFleet {
  /** Writes `.flotilla/agents/<name>.md` from frontmatter fields and a body. */
  agent(name: string, fields: Record<string, unknown>, body?: string): void;
  config(cfg: Record<string, unknown>): void;
  /** Writes a scripted-model file; returns its absolute path. */
  script(name: string, content: Record<string, unknown>): string;
  env(extra?: Record<string, string>): Record<string, string>;
  /** `flotilla <args>` in the project, waiting for it. */
  run(args: string[], opts?: { env?: Record<string, string>; input?: string }): Promise<CliResult>;
  /** `flotilla <args>` started, not awaited. */
  start(args: string[], opts?: { env?: Record<string, string> }): ResultPromise;
  ids(): string[];
  record(id: string): AgentRecord;
  audit(): Record<string, unknown>[];
}

/** A finished CLI run (stdout/stderr without the final newline, as execa gives them). */
export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export function project(prefix = 'flotilla-e2e-'): Project {
  const fleet = tempFleet(prefix);
  const { layout } = fleet;
  mkdirSync(layout.agentsDir, { recursive: true });
  const baseEnv = (): Record<string, string> => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env))
      if (v !== undefined && !k.startsWith('FLOTILLA_') && k !== 'TMUX') env[k] = v;
    // A private tmux server name by default: no test ever opens windows on a person's server.
    return {
      ...env,
      FLOTILLA_ROOT: layout.root,
      XDG_CONFIG_HOME: join(fleet.project, '.xdg'),
      FLOTILLA_TMUX_SOCKET: `flotilla-test-${process.pid}-unused`,
    };
  };
  const p: Project = {
    ...fleet,
    agent(name, fields, body = 'You are a test agent.') {
      writeFileSync(
        join(layout.agentsDir, `${name}.md`),
        `---\n${stringify({ name, description: `${name} test agent`, ...fields })}---\n${body}\n`,
      );
    },
    config(cfg) {
      writeFileSync(layout.configFile, stringify(cfg));
    },
    script(name, content) {
      const path = join(fleet.project, name);
      writeFileSync(path, stringify(content));
      return path;
    },
    env: (extra = {}) => ({ ...baseEnv(), ...extra }),
    run: async (args, opts = {}) => {
      const r = await flotilla(args, {
        cwd: fleet.project,
        env: p.env(opts.env),
        extendEnv: false,
        ...(opts.input !== undefined ? { input: opts.input } : { stdin: 'ignore' }),
      });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
    },
    start: (args, opts = {}) =>
      execa(process.execPath, [CLI, ...args], {
        cwd: fleet.project,
        env: p.env(opts.env),
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
      }),
    ids: () =>
      existsSync(layout.registryDir)
        ? readdirSync(layout.registryDir)
            .filter((f) => f.endsWith('.json'))
            .map((f) => f.slice(0, -5))
            .sort()
        : [],
    record(id) {
      const rec = readRecord(layout, id);
      if (!rec) throw new Error(`no record ${id}`);
      return rec;
    },
    audit: () => auditLines(layout),
  };
  // Its definitions set modes and hooks, which only a trusted folder may (docs/security-trust.md "Folder trust").
  trustProject(fleet.project, baseEnv());
  return p;
}

export function auditLines(layout: Layout): Record<string, unknown>[] {
  if (!existsSync(layout.auditFile)) return [];
  return readFileSync(layout.auditFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** True while a process exists and is not a zombie (a zombie has finished running). */
export function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The one agent id the CLI's banner names on stderr. */
export function bannerId(stderr: string): string {
  const m = /\[flotilla:agent id=(\S+)/.exec(stderr);
  if (!m) throw new Error(`no agent banner in stderr:\n${stderr}`);
  return m[1]!;
}
