import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { createEditTool } from '../../src/tools/edit.js';
import { createWriteTool } from '../../src/tools/write.js';
import { ctxFor } from './process-helpers.js';

let fleet: TempFleet;
let memory: string;
beforeEach(() => {
  fleet = tempFleet('flotilla-write-');
  memory = fleet.layout.projectMemory('tester');
});
afterEach(() => fleet.cleanup());

const scope = () => ({ protectedRoots: [fleet.layout.root], writableWithin: [memory] });
const write = () => createWriteTool(scope());
const edit = () => createEditTool(scope());

describe('write', () => {
  it('creates a file and its parent dirs, then overwrites it', async () => {
    const ctx = ctxFor(fleet.project);
    const r = await write().execute({ path: 'deep/er/notes.md', content: 'a\nb\n' }, ctx);
    expect(r.output).toBe('Created deep/er/notes.md (4 bytes, 2 lines).');
    expect(readFileSync(join(fleet.project, 'deep/er/notes.md'), 'utf8')).toBe('a\nb\n');
    const again = await write().execute({ path: 'deep/er/notes.md', content: 'c' }, ctx);
    expect(again.output).toBe('Overwrote deep/er/notes.md (1 bytes, 1 line).');
    expect(readFileSync(join(fleet.project, 'deep/er/notes.md'), 'utf8')).toBe('c');
  });

  it('refuses to write into .flotilla/state', async () => {
    const r = await write().execute({ path: '.flotilla/state/agents/evil.json', content: '{}' }, ctxFor(fleet.project));
    expect(r.isError).toBe(true);
    expect(r.output).toMatch(
      /^Refused to write .*\.flotilla\/state\/agents\/evil\.json: it is inside the fleet root .*\.flotilla, which file tools may not change/,
    );
    expect(r.output).toContain(`Only your memory dir may be written there: ${memory}.`);
    expect(existsSync(join(fleet.layout.registryDir, 'evil.json'))).toBe(false);
  });

  it('refuses a path that reaches .flotilla through ..', async () => {
    mkdirSync(join(fleet.project, 'a'));
    const r = await write().execute({ path: 'a/../.flotilla/state/x', content: 'x' }, ctxFor(fleet.project));
    expect(r.isError).toBe(true);
    expect(r.output).toContain('inside the fleet root');
    expect(existsSync(join(fleet.layout.state, 'x'))).toBe(false);
  });

  it('refuses a symlinked directory that points into .flotilla', async () => {
    symlinkSync(fleet.layout.state, join(fleet.project, 'innocent'));
    const r = await write().execute({ path: 'innocent/inbox/planted.md', content: 'x' }, ctxFor(fleet.project));
    expect(r.isError).toBe(true);
    expect(r.output).toContain(`(it resolves to ${join(fleet.layout.state, 'inbox/planted.md')})`);
    expect(existsSync(join(fleet.layout.inboxRoot, 'planted.md'))).toBe(false);
  });

  it('refuses a dangling symlink whose target would be created inside .flotilla', async () => {
    symlinkSync(join(fleet.layout.state, 'not-yet.json'), join(fleet.project, 'link.json'));
    const r = await write().execute({ path: 'link.json', content: 'x' }, ctxFor(fleet.project));
    expect(r.isError).toBe(true);
    expect(existsSync(join(fleet.layout.state, 'not-yet.json'))).toBe(false);
  });

  it('allows writing inside the memory dir', async () => {
    const r = await write().execute(
      { path: '.flotilla/agent-memory/tester/MEMORY.md', content: '# learned\n' },
      ctxFor(fleet.project),
    );
    expect(r.isError).toBeUndefined();
    expect(readFileSync(join(memory, 'MEMORY.md'), 'utf8')).toBe('# learned\n');
  });

  it("does not let the memory exception cover another agent's memory", async () => {
    const r = await write().execute(
      { path: '.flotilla/agent-memory/other/MEMORY.md', content: 'x' },
      ctxFor(fleet.project),
    );
    expect(r.isError).toBe(true);
  });

  it('a directory path is an error', async () => {
    mkdirSync(join(fleet.project, 'dir'));
    const r = await write().execute({ path: 'dir', content: 'x' }, ctxFor(fleet.project));
    expect(r.isError).toBe(true);
    expect(r.output).toBe('dir is a directory; write needs a file path such as dir/notes.md.');
  });
});

describe('edit', () => {
  const file = () => join(fleet.project, 'app.ts');

  it('replaces a unique string and shows the changed lines', async () => {
    writeFileSync(file(), 'const a = 1;\nconst retries = 3;\nconst b = 2;\n');
    const r = await edit().execute(
      { path: 'app.ts', old: 'const retries = 3;', new: 'const retries = 5;' },
      ctxFor(fleet.project),
    );
    expect(r.isError).toBeUndefined();
    expect(readFileSync(file(), 'utf8')).toBe('const a = 1;\nconst retries = 5;\nconst b = 2;\n');
    expect(r.output).toBe(
      'Replaced 1 occurrence in app.ts. Now around line 2:\n     1\tconst a = 1;\n     2\tconst retries = 5;\n     3\tconst b = 2;',
    );
  });

  it('a non-unique old string fails with the count, the lines and the fix', async () => {
    writeFileSync(file(), 'x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n');
    const r = await edit().execute({ path: 'app.ts', old: 'x = 1', new: 'x = 9' }, ctxFor(fleet.project));
    expect(r.isError).toBe(true);
    expect(r.output).toBe(
      '`old` occurs 3 times in app.ts (at lines 1, 3, 5), so the edit is ambiguous. ' +
        'Include more surrounding lines in `old` so it matches exactly once, or pass "replace_all": true to replace every occurrence.',
    );
    expect(readFileSync(file(), 'utf8')).toBe('x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n');
  });

  it('replace_all replaces every occurrence', async () => {
    writeFileSync(file(), 'x = 1\ny = 2\nx = 1\n');
    const r = await edit().execute(
      { path: 'app.ts', old: 'x = 1', new: 'x = $&9', replace_all: true },
      ctxFor(fleet.project),
    );
    expect(r.output).toMatch(/^Replaced 2 occurrences in app\.ts\./);
    expect(readFileSync(file(), 'utf8')).toBe('x = $&9\ny = 2\nx = $&9\n');
  });

  it('a missing old string fails showing what was searched and suggesting read', async () => {
    writeFileSync(file(), 'function main() {\n    return 1;\n}\n');
    const r = await edit().execute(
      { path: 'app.ts', old: 'function main() {\n  return 1;\n}', new: 'x' },
      ctxFor(fleet.project),
    );
    expect(r.isError).toBe(true);
    expect(r.output).toBe(
      '`old` was not found in app.ts. Searched for (3 lines):\nfunction main() {\n  return 1;\n}\n' +
        'Text that matches when whitespace is ignored starts at line 1; copy it exactly, including indentation. ' +
        'The text must match the file exactly. Read the file (read {"path": "app.ts"}) and copy the current text into `old`.',
    );
  });

  it('matches a CRLF file when old was written with LF', async () => {
    writeFileSync(file(), 'a\r\nb\r\nc\r\n');
    const r = await edit().execute({ path: 'app.ts', old: 'a\nb', new: 'A\nB' }, ctxFor(fleet.project));
    expect(r.isError).toBeUndefined();
    expect(readFileSync(file(), 'utf8')).toBe('A\r\nB\r\nc\r\n');
  });

  it('a missing file is an error suggesting write', async () => {
    const r = await edit().execute({ path: 'nope.ts', old: 'a', new: 'b' }, ctxFor(fleet.project));
    expect(r.output).toBe('File not found: nope.ts. To create a file use write.');
  });

  it('is refused inside .flotilla like write, also through a symlink', async () => {
    const target = fleet.layout.registryFile('victim');
    writeFileSync(target, '{"status":"running"}');
    symlinkSync(target, join(fleet.project, 'looks-harmless.json'));
    const r = await edit().execute(
      { path: 'looks-harmless.json', old: 'running', new: 'completed' },
      ctxFor(fleet.project),
    );
    expect(r.isError).toBe(true);
    expect(r.output).toContain('inside the fleet root');
    expect(readFileSync(target, 'utf8')).toBe('{"status":"running"}');
  });
});
