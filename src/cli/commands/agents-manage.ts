import type { Command } from 'commander';
import { execa } from 'execa';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  unlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { ask } from '../ask.js';
import { FlotillaError, UsageError } from '../../errors.js';
import { parseDefinition } from '../../definitions/parse.js';
import { pickDefinition } from '../../definitions/load.js';
import { renderDefinition } from '../../definitions/render.js';
import { formatIssue, type Definition, type LoadResult } from '../../definitions/types.js';
import { assertValidId } from '../../fleet/ids.js';
import { writeFileAtomic } from '../../layout/atomic.js';
import { printJson } from '../output.js';
import { loadForCli } from './agents-load.js';

/** `agents create`, `agents edit`, `agents delete`. */

export async function createAgent(
  cmd: Command,
  name: string,
  opts: { description: string; model?: string; tools?: string; dir?: string; json?: boolean },
): Promise<void> {
  assertValidId(name, 'definition name');
  if (opts.description.trim() === '')
    throw new UsageError(
      "--description is empty — say what the agent does, e.g. --description 'Reviews diffs for bugs'",
    );
  const { layout, config, result } = await loadForCli(cmd);
  const dir = opts.dir ? resolve(opts.dir) : layout.agentsDir;
  const path = join(dir, `${name}.md`);
  if (existsSync(path))
    throw new FlotillaError(
      `${path} already exists — change it with 'flotilla agents edit ${name}' or pick another name`,
      { code: 'exists' },
    );
  const { splitCommaList } = await import('../../definitions/normalize-tools.js');
  const text = renderDefinition(
    {
      name,
      description: opts.description.trim(),
      ...(opts.model ? { model: opts.model } : {}),
      ...(opts.tools ? { tools: splitCommaList(opts.tools) } : {}),
    },
    `You are ${name}. ${opts.description.trim()}\n\nDescribe here how this agent should work: what to read first, what to check, and what its final answer should contain.`,
  );
  // Validate what we are about to write, so create can never leave a file that does not load.
  const parsed = parseDefinition(text, { path, scope: 'project', config });
  if (parsed.errors.length) throw new UsageError(parsed.errors.map((e) => e.message).join('; '));
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(path, text);
  const existing = result.definitions.find((d) => d.name === name);
  if (opts.json) printJson({ name, path });
  else process.stdout.write(`${path}\n`);
  for (const w of parsed.warnings) process.stderr.write(`flotilla: warning: ${formatIssue(w)}\n`);
  if (existing)
    process.stderr.write(
      `flotilla: note: '${name}' also exists in ${existing.source.path} (${existing.source.scope}); the one found first wins\n`,
    );
}

export async function editAgent(cmd: Command, name: string): Promise<void> {
  const { config, result } = await loadForCli(cmd);
  const def = fileDefinition(result, name, 'edit');
  const target = realpathSync(def.source.path);
  const work = mkdtempSync(join(tmpdir(), 'flotilla-edit-'));
  const copy = join(work, basename(target));
  copyFileSync(target, copy);
  const before = readFileSync(copy, 'utf8');
  const editor = process.env.VISUAL || process.env.EDITOR || 'vi';
  // $EDITOR may carry arguments ("code -w"), so the shell splits it, as git does.
  const run = await execa('sh', ['-c', `${editor} "$1"`, 'editor', copy], { stdio: 'inherit', reject: false });
  if (run.exitCode !== 0) {
    throw new FlotillaError(
      `the editor (${editor}) exited with ${run.exitCode ?? run.signal}; ${def.source.path} is unchanged — your copy is in ${copy}`,
      { code: 'editor-failed' },
    );
  }
  const after = readFileSync(copy, 'utf8');
  if (after === before) {
    rmSync(work, { recursive: true, force: true });
    process.stderr.write(`flotilla: no changes to ${def.source.path}\n`);
    return;
  }
  const parsed = parseDefinition(after, { path: def.source.path, scope: def.source.scope, config });
  if (parsed.errors.length) {
    for (const e of parsed.errors) process.stderr.write(`flotilla: error: ${formatIssue(e)}\n`);
    throw new FlotillaError(
      `the edited definition does not load, so ${def.source.path} was kept unchanged — fix your copy in ${copy} and run 'flotilla agents edit ${name}' again`,
      { code: 'invalid-definition' },
    );
  }
  writeFileAtomic(target, after);
  rmSync(work, { recursive: true, force: true });
  for (const w of parsed.warnings) process.stderr.write(`flotilla: warning: ${formatIssue(w)}\n`);
  if (parsed.definition && parsed.definition.name !== name) {
    process.stderr.write(
      `flotilla: note: the definition is now named '${parsed.definition.name}' (file ${basename(target)})\n`,
    );
  }
  process.stdout.write(`${def.source.path}\n`);
}

export async function deleteAgent(cmd: Command, name: string, opts: { yes?: boolean }): Promise<void> {
  const { result } = await loadForCli(cmd);
  const def = fileDefinition(result, name, 'delete');
  if (!opts.yes) {
    const answer = await ask(`delete ${def.source.path}? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) {
      process.stderr.write('flotilla: not deleted\n');
      process.exitCode = 1;
      return;
    }
  }
  unlinkSync(def.source.path);
  process.stdout.write(`deleted ${def.source.path}\n`);
  const next = result.shadowed.find((s) => s.name === name);
  if (next) process.stderr.write(`flotilla: note: '${name}' now comes from ${next.path} (${next.scope})\n`);
}

/** The definition file behind `name`; built-ins have no file to change. */
function fileDefinition(result: LoadResult, name: string, verb: string): Definition {
  const def = pickDefinition(result, name);
  if (def.source.scope === 'builtin') {
    throw new FlotillaError(
      `'${name}' is built in and has no file to ${verb} — to change it, create your own: flotilla agents create ${name} --description "…"`,
      { code: 'builtin' },
    );
  }
  return def;
}

/** Reads one line of answer; end of input (nobody there) counts as No. */
