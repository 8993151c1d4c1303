import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { FlotillaError, errorMessage, isErrno } from '../errors.js';
import type { Layout } from '../layout/layout.js';
import { isTrusted } from '../config/trust-store.js';
import { builtinDefinitions } from './builtin.js';
import { demoDefinitions, inDemo } from './demo.js';
import { definitionDirs } from './locations.js';
import { parseDefinition } from './parse.js';
import type { Definition, DefinitionConfig, DefinitionIssue, DefinitionScope, LoadResult } from './types.js';

/** Largest definition file read (§7); checked with stat before reading. */
export const MAX_DEFINITION_BYTES = 256 * 1024;

export interface LoadOptions {
  layout: Pick<Layout, 'agentsDir' | 'project' | 'root' | 'configFile'>;
  config: DefinitionConfig;
  env?: NodeJS.ProcessEnv;
  /** Override the searched directories (tests, `--dir`). */
  dirs?: { dir: string; scope: DefinitionScope }[];
  /** Whether the project's files are trusted; default: what the person's trust list says. */
  trusted?: boolean;
}

/**
 * Loads every definition from every location (§7). One bad file never hides the rest: it
 * becomes an entry in `errors` and the others load.
 */
export async function loadDefinitions(opts: LoadOptions): Promise<LoadResult> {
  const trusted = opts.trusted ?? isTrusted(opts.layout, opts.env);
  const dirs = dedupe(opts.dirs ?? definitionDirs(opts.layout, opts.env));
  const perDir: (Pick<LoadResult, 'definitions' | 'errors' | 'warnings'> & { scope?: DefinitionScope })[] =
    await Promise.all(dirs.map((d) => loadDirectory(d.dir, d.scope, opts.config)));
  // The demo's tree runs the demo's own definitions, whatever files of those names exist.
  if (!opts.dirs && inDemo(opts.env ?? process.env)) perDir.unshift(demoDefinitions(opts.config));
  const result: LoadResult = {
    definitions: [],
    errors: [],
    warnings: [],
    shadowed: [],
    trust: { trusted, ignored: [] },
  };
  const byName = new Map<string, Definition>();
  const take = (def: Definition): void => {
    const winner = byName.get(def.name);
    if (winner)
      result.shadowed.push({ name: def.name, path: def.source.path, scope: def.source.scope, by: winner.source.path });
    else byName.set(def.name, def);
  };
  for (const r of perDir) {
    result.errors.push(...r.errors);
    result.warnings.push(...r.warnings);
  }
  const builtin = builtinDefinitions(opts.config);
  const isProject = (r: { scope?: DefinitionScope }): boolean => r.scope !== undefined && isProjectScope(r.scope);
  // Folders in precedence order; the built-in comes last.
  const inOrder = [...perDir.flatMap((r) => r.definitions), ...builtin.definitions];
  if (trusted) inOrder.forEach(take);
  else {
    // Untrusted, the person's own definitions and the built-in come first: a stranger's
    // `general.md` or `reviewer.md` never replaces them (docs/security-trust.md "Folder trust").
    [...perDir.filter((r) => !isProject(r)).flatMap((r) => r.definitions), ...builtin.definitions].forEach(take);
    for (const def of perDir.filter(isProject).flatMap((r) => r.definitions)) {
      const winner = byName.get(def.name);
      if (winner && !isProjectScope(winner.source.scope)) {
        result.trust.ignored.push(
          `${def.source.path} (would replace ${winner.source.scope === 'builtin' ? 'the built-in' : winner.source.path} '${def.name}')`,
        );
      }
      take(winner ? def : untrustedDefinition(def, opts.config, result.trust.ignored));
    }
  }
  for (const issue of builtin.errors) if (!byName.has(issue.name!)) result.errors.push(issue);
  // Listed in the folders' order whichever won, so `agents list` reads the same trusted or not.
  const order = inOrder.map((d) => d.source.path);
  result.definitions = [...byName.values()].sort((a, b) => order.indexOf(a.source.path) - order.indexOf(b.source.path));
  return result;
}

const isProjectScope = (scope: DefinitionScope): boolean => scope === 'project' || scope === 'claude-project';

/**
 * An untrusted project's definition as it may run: no hooks, no schedule, no permission mode
 * above `default`, no provider keys for its commands, no turns or time beyond the config's
 * limits, no memory in the person's home (docs/security-trust.md "Folder trust"). What was taken
 * away is added to `ignored`.
 */
function untrustedDefinition(def: Definition, config: DefinitionConfig, ignored: string[]): Definition {
  let out = def;
  // A limit the person's config sets is a ceiling a stranger's file may lower, never raise.
  if (def.maxTurns > config.limits.max_turns) {
    ignored.push(`max_turns ${def.maxTurns} of ${def.source.path} (capped at ${config.limits.max_turns})`);
    out = { ...out, maxTurns: config.limits.max_turns };
  }
  if (def.timeoutSecs > config.limits.timeout_secs) {
    ignored.push(`timeout_secs ${def.timeoutSecs} of ${def.source.path} (capped at ${config.limits.timeout_secs})`);
    out = { ...out, timeoutSecs: config.limits.timeout_secs };
  }
  // User memory is a folder in the person's home that every project's agents read: not a clone's to write.
  if (def.memory === 'user' && config.agents.default_memory_scope !== 'user') {
    ignored.push(`memory user of ${def.source.path}`);
    const { memory: _dropped, ...rest } = out;
    out = config.agents.default_memory_scope ? { ...rest, memory: config.agents.default_memory_scope } : rest;
  }
  if (def.hooks.PreToolUse.length || def.hooks.PostToolUse.length) {
    ignored.push(`hooks of ${def.source.path}`);
    out = { ...out, hooks: { PreToolUse: [], PostToolUse: [] } };
  }
  if (def.schedules?.length) {
    // A schedule starts runs with nobody asking: a stranger's file must not.
    ignored.push(`schedule of ${def.source.path}`);
    const { schedules: _dropped, ...rest } = out;
    out = rest;
  }
  // A mode the file does not set is the person's own default (an untrusted config cannot raise it).
  if (def.declared.permissionMode && def.permissionMode !== 'plan' && def.permissionMode !== 'default') {
    ignored.push(`permission_mode ${def.permissionMode} of ${def.source.path}`);
    out = { ...out, permissionMode: 'default' };
  }
  // Provider keys are the person's: a stranger's file cannot hand them to its commands.
  if (def.passEnv?.length) {
    ignored.push(`permissions.env ${def.passEnv.join(', ')} of ${def.source.path}`);
    const { passEnv: _dropped, ...rest } = out;
    out = rest;
  }
  // Which machine runs it is the person's to say, as hosts: is (docs/security-trust.md "Hosts"): it runs here.
  if (def.host) {
    ignored.push(`host ${def.host} of ${def.source.path}`);
    const { host: _dropped, ...rest } = out;
    out = rest;
  }
  return out;
}

/** Loads the `*.md` files of one directory; a missing directory is simply empty. */
export async function loadDirectory(
  dir: string,
  scope: DefinitionScope,
  config: DefinitionConfig,
): Promise<LoadResult & { scope: DefinitionScope }> {
  const result: LoadResult & { scope: DefinitionScope } = {
    definitions: [],
    errors: [],
    warnings: [],
    shadowed: [],
    trust: { trusted: true, ignored: [] },
    scope,
  };
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.md')).sort();
  } catch (err) {
    if (!isErrno(err, 'ENOENT') && !isErrno(err, 'ENOTDIR')) {
      result.warnings.push({
        path: dir,
        field: 'file',
        message: `cannot read the directory: ${errorMessage(err)} (file) — check its permissions`,
      });
    }
    return result;
  }
  const realDir = await realpath(dir);
  const seen = new Map<string, string>();
  for (const name of names) {
    const path = join(dir, name);
    const r = await loadFile(path, realDir, scope, config);
    result.errors.push(...r.errors);
    result.warnings.push(...r.warnings);
    const def = r.definition;
    if (!def) continue;
    const first = seen.get(def.name);
    if (first) {
      result.errors.push({
        path,
        field: 'name',
        name: def.name,
        message: `name '${def.name}' is already used by ${first} (name) — give each definition its own name, e.g. name: ${def.name}-2`,
      });
      continue;
    }
    seen.set(def.name, path);
    result.definitions.push(def);
  }
  return result;
}

async function loadFile(
  path: string,
  realDir: string,
  scope: DefinitionScope,
  config: DefinitionConfig,
): Promise<{ definition?: Definition; errors: DefinitionIssue[]; warnings: DefinitionIssue[] }> {
  const issue = (field: string, message: string): DefinitionIssue[] => [{ path, field, message }];
  try {
    const link = await lstat(path);
    if (link.isSymbolicLink()) {
      const target = await realpath(path).catch(() => undefined);
      const rel = target === undefined ? undefined : relative(realDir, target);
      if (rel === undefined || rel === '' || rel.startsWith('..') || rel.startsWith(sep)) {
        // A link out of the folder could pull in any file on the machine as a system prompt.
        return {
          errors: [],
          warnings: issue(
            'file',
            `symlink to ${target ?? 'a missing file'} resolves outside ${realDir}; skipped (file) — copy the file into the folder instead, e.g. cp "${target ?? 'TARGET'}" "${path}"`,
          ),
        };
      }
    }
    const st = await stat(path);
    if (!st.isFile()) return { errors: [], warnings: [] };
    if (st.size > MAX_DEFINITION_BYTES) {
      return {
        errors: issue(
          'file',
          `file is ${st.size} bytes, over the ${MAX_DEFINITION_BYTES}-byte (256 KiB) limit (file) — keep the prompt short and move reference material into a file the agent reads, e.g. "Read docs/conventions.md before you start"`,
        ),
        warnings: [],
      };
    }
    const text = await readFile(path, 'utf8');
    return parseDefinition(text, { path, scope, config });
  } catch (err) {
    return {
      errors: issue('file', `cannot read the file: ${errorMessage(err)} (file) — check that it exists and is readable`),
      warnings: [],
    };
  }
}

/** The same folder reached twice (project = home) is read once, at its first position. */
function dedupe(dirs: { dir: string; scope: DefinitionScope }[]): { dir: string; scope: DefinitionScope }[] {
  const seen = new Set<string>();
  return dirs.filter((d) => (seen.has(d.dir) ? false : (seen.add(d.dir), true)));
}

/**
 * The definition to run: `name`, or config `agents.default`. Unknown → an error saying how to
 * list or create one; a file with that name that failed to load → its first error.
 */
export function pickDefinition(result: LoadResult, name: string): Definition {
  const def = result.definitions.find((d) => d.name === name);
  if (def) return def;
  // A file whose frontmatter did not parse has no name yet: its file name stands in.
  const broken =
    result.errors.find((e) => e.name === name) ??
    result.errors.find((e) => e.name === undefined && e.path.replace(/^.*[\\/]/, '').replace(/\.md$/, '') === name);
  if (broken)
    throw new FlotillaError(`definition '${name}' did not load: ${broken.path}: ${broken.message}`, {
      code: 'invalid-definition',
    });
  throw new FlotillaError(
    `no agent definition named '${name}' — run 'flotilla agents list' to see them, or 'flotilla agents create ${name} --description "…"' to make one`,
    { code: 'unknown-definition' },
  );
}
