import { mkdirSync, openSync, closeSync, ftruncateSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/schema.js';
import { loadDefinitions, pickDefinition, MAX_DEFINITION_BYTES } from '../../src/definitions/load.js';
import { definitionDirs } from '../../src/definitions/locations.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

const config = defaultConfig();
const def = (name: string, extra = '') =>
  `---\nname: ${name}\ndescription: ${name} agent\n${extra}---\n\nYou are ${name}.\n`;

let fleet: TempFleet;
let env: NodeJS.ProcessEnv;
let dirs: Record<'project' | 'claudeProject' | 'user' | 'claudeUser', string>;

beforeEach(() => {
  fleet = tempFleet();
  const home = join(fleet.project, 'home');
  env = { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg') };
  dirs = {
    project: fleet.layout.agentsDir,
    claudeProject: join(fleet.project, '.claude', 'agents'),
    user: join(home, 'xdg', 'flotilla', 'agents'),
    claudeUser: join(home, '.claude', 'agents'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
});
afterEach(() => fleet.cleanup());

// Precedence as a trusted folder has it; untrusted folders: test/config/trust.unit.test.ts.
const load = () => loadDefinitions({ layout: fleet.layout, config, env, trusted: true });
const put = (dir: string, file: string, text: string) => writeFileSync(join(dir, file), text);

describe('locations and precedence', () => {
  it('searches the four folders in order, using XDG_CONFIG_HOME', () => {
    expect(definitionDirs(fleet.layout, env)).toEqual([
      { dir: dirs.project, scope: 'project' },
      { dir: dirs.claudeProject, scope: 'claude-project' },
      { dir: dirs.user, scope: 'user' },
      { dir: dirs.claudeUser, scope: 'claude-user' },
    ]);
    expect(definitionDirs(fleet.layout, { HOME: '/h' })[2]!.dir).toBe('/h/.config/flotilla/agents');
  });

  it('first location wins on a name clash; the others are reported as shadowed', async () => {
    put(dirs.claudeUser, 'a.md', def('shared', 'model: haiku\n'));
    put(dirs.user, 'b.md', def('shared', 'model: opus\n'));
    put(dirs.claudeProject, 'c.md', def('shared', 'model: sonnet\n'));
    put(dirs.project, 'd.md', def('shared', 'model: inherit\n'));
    put(dirs.claudeUser, 'only-user.md', def('only-user'));
    const r = await load();
    const shared = r.definitions.find((d) => d.name === 'shared')!;
    expect(shared.model).toBe('inherit');
    expect(shared.source).toEqual({ path: join(dirs.project, 'd.md'), scope: 'project' });
    expect(r.shadowed.map((s) => s.scope)).toEqual(['claude-project', 'user', 'claude-user']);
    expect(r.definitions.find((d) => d.name === 'only-user')!.source.scope).toBe('claude-user');
  });

  it('each lower location wins when the higher ones lack the name', async () => {
    put(dirs.claudeUser, 'x.md', def('x', 'model: haiku\n'));
    put(dirs.user, 'x.md', def('x', 'model: opus\n'));
    expect((await load()).definitions.find((d) => d.name === 'x')!.model).toBe('opus');
    put(dirs.claudeProject, 'x.md', def('x', 'model: sonnet\n'));
    expect((await load()).definitions.find((d) => d.name === 'x')!.model).toBe('sonnet');
  });

  it('ships a built-in general definition that files can override', async () => {
    let r = await load();
    const general = pickDefinition(r, config.agents.default);
    expect(general).toMatchObject({ name: 'general', tools: { allow: null }, source: { scope: 'builtin' } });
    expect(general.body.length).toBeGreaterThan(50);
    put(dirs.user, 'general.md', def('general', 'tools: Read\n'));
    r = await load();
    expect(pickDefinition(r, 'general').source.scope).toBe('user');
    expect(r.shadowed).toContainEqual(expect.objectContaining({ name: 'general', scope: 'builtin' }));
  });

  it('missing folders are simply empty', async () => {
    fleet.cleanup();
    fleet = tempFleet();
    const r = await loadDefinitions({ layout: fleet.layout, config, env: { HOME: join(fleet.project, 'nowhere') } });
    expect(r.definitions.map((d) => d.name)).toEqual(['general']);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
  });
});

describe('files', () => {
  it('one bad file among good ones leaves the good ones loaded', async () => {
    put(dirs.project, 'a.md', def('alpha'));
    put(dirs.project, 'b.md', '---\nname: Bad Name\ndescription: x\n---\nbody\n');
    put(dirs.project, 'c.md', def('gamma'));
    put(dirs.project, 'notes.txt', 'not a definition');
    const r = await load();
    expect(r.definitions.map((d) => d.name).sort()).toEqual(['alpha', 'gamma', 'general']);
    expect(r.errors).toEqual([
      {
        path: join(dirs.project, 'b.md'),
        field: 'name',
        name: 'Bad Name',
        message:
          "name 'Bad Name' is not valid (name) — use 1-64 letters, digits, '_' or '-', starting with a letter or digit, e.g. name: bad-name",
      },
    ]);
  });

  it('refuses a file over 256 KiB from its size alone', async () => {
    const path = join(dirs.project, 'huge.md');
    // Sparse 3 GiB: reading it whole would fail differently, so this proves stat comes first.
    const fd = openSync(path, 'w');
    ftruncateSync(fd, 3 * 1024 ** 3);
    closeSync(fd);
    put(dirs.project, 'ok.md', def('ok'));
    const r = await load();
    expect(r.errors).toEqual([
      {
        path,
        field: 'file',
        message: `file is ${3 * 1024 ** 3} bytes, over the 262144-byte (256 KiB) limit (file) — keep the prompt short and move reference material into a file the agent reads, e.g. "Read docs/conventions.md before you start"`,
      },
    ]);
    expect(r.definitions.map((d) => d.name)).toContain('ok');
  });

  it('accepts a file of exactly 256 KiB', async () => {
    const head = def('big');
    put(dirs.project, 'big.md', head + 'x'.repeat(MAX_DEFINITION_BYTES - Buffer.byteLength(head)));
    expect((await load()).definitions.map((d) => d.name)).toContain('big');
  });

  it('refuses NUL bytes', async () => {
    put(dirs.project, 'nul.md', def('nul') + '\0');
    const r = await load();
    expect(r.errors.map((e) => e.message)).toEqual([
      'file contains NUL bytes (file) — save it as plain UTF-8 text, e.g. re-save it from your editor as Markdown',
    ]);
  });

  it('skips a symlink that resolves outside its folder, with a warning', async () => {
    const outside = join(fleet.project, 'secret.md');
    writeFileSync(outside, def('outside'));
    symlinkSync(outside, join(dirs.project, 'link.md'));
    const r = await load();
    expect(r.definitions.map((d) => d.name)).not.toContain('outside');
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([
      {
        path: join(dirs.project, 'link.md'),
        field: 'file',
        message: `symlink to ${outside} resolves outside ${dirs.project}; skipped (file) — copy the file into the folder instead, e.g. cp "${outside}" "${join(dirs.project, 'link.md')}"`,
      },
    ]);
  });

  it('follows a symlink that stays inside its folder', async () => {
    mkdirSync(join(dirs.project, 'sub'));
    writeFileSync(join(dirs.project, 'sub', 'real.txt'), def('inside'));
    symlinkSync(join(dirs.project, 'sub', 'real.txt'), join(dirs.project, 'inside.md'));
    expect((await load()).definitions.map((d) => d.name)).toContain('inside');
  });

  it('two files with one name in one folder: the second is an error', async () => {
    put(dirs.project, 'a.md', def('twin'));
    put(dirs.project, 'b.md', def('twin'));
    const r = await load();
    expect(r.definitions.filter((d) => d.name === 'twin')).toHaveLength(1);
    expect(r.errors.map((e) => e.message)).toEqual([
      `name 'twin' is already used by ${join(dirs.project, 'a.md')} (name) — give each definition its own name, e.g. name: twin-2`,
    ]);
  });
});

describe('pickDefinition', () => {
  it('says how to list or create an unknown name', async () => {
    expect(() =>
      pickDefinition(
        { definitions: [], errors: [], warnings: [], shadowed: [], trust: { trusted: true, ignored: [] } },
        'nope',
      ),
    ).toThrow(
      "no agent definition named 'nope' — run 'flotilla agents list' to see them, or 'flotilla agents create nope --description \"…\"' to make one",
    );
  });

  it('explains why a named file did not load', async () => {
    put(dirs.project, 'broken.md', def('broken', 'max_turns: lots\n'));
    const r = await load();
    expect(() => pickDefinition(r, 'broken')).toThrow(
      `definition 'broken' did not load: ${join(dirs.project, 'broken.md')}: max_turns must be a whole number of at least 1, got 'lots' (max_turns) — e.g. max_turns: 20`,
    );
  });
});

describe('host: (design §17)', () => {
  it('names the host a definition opens on; local is this machine; a bad name is an error naming the field', async () => {
    put(dirs.project, 'far.md', def('far', 'host: gpu-1\n'));
    put(dirs.project, 'near.md', def('near', 'host: local\n'));
    put(dirs.project, 'bad.md', def('bad', 'host: "GPU 1"\n'));
    const r = await load();
    expect(pickDefinition(r, 'far').host).toBe('gpu-1');
    expect(pickDefinition(r, 'near').host).toBeUndefined();
    expect(r.errors.map((e) => [e.field, e.message])).toEqual([
      [
        'host',
        `host must be a host name from hosts: in your config (lower-case letters, digits, '-', '_'), got 'GPU 1' (host) — e.g. host: gpu1`,
      ],
    ]);
  });

  it("is ignored in an untrusted project's definition, and said so: which machine runs an agent is the person's to say", async () => {
    put(dirs.project, 'far.md', def('far', 'host: gpu1\n'));
    put(dirs.user, 'mine.md', def('mine', 'host: gpu1\n'));
    const r = await loadDefinitions({ layout: fleet.layout, config, env, trusted: false });
    expect(pickDefinition(r, 'far').host).toBeUndefined();
    expect(r.trust.ignored).toEqual([`host gpu1 of ${join(dirs.project, 'far.md')}`]);
    // The person's own definition keeps it.
    expect(pickDefinition(r, 'mine').host).toBe('gpu1');
  });
});
