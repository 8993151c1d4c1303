import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { flotilla } from '../helpers/cli.js';
import { tempDir } from '../helpers/fleet.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('flotilla-project-root-');
});
afterEach(() => tmp.cleanup());

/**
 * A fresh clone's run failed "spawn refused: no agent definition named 'a'" right after the
 * test wrote it: Codex's sandbox had left an empty `.git` in /tmp (a mount point), and the
 * project in /tmp/<dir> was taken to be /tmp. A person's project below such a folder finds its
 * own definitions.
 */
describe('a project below a folder with an empty .git', () => {
  it('finds the definitions in its own .flotilla', async () => {
    mkdirSync(join(tmp.dir, '.git'));
    const project = join(tmp.dir, 'project');
    mkdirSync(join(project, '.flotilla', 'agents'), { recursive: true });
    writeFileSync(
      join(project, '.flotilla', 'agents', 'a.md'),
      '---\nname: a\ndescription: Agent a\n---\nYou are a.\n',
    );
    const home = join(tmp.dir, 'home');
    const r = await flotilla(['agents', 'show', 'a'], {
      cwd: project,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg'), FLOTILLA_ROOT: '' },
    });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(String(r.stdout)).toContain(`source:           ${join(project, '.flotilla', 'agents', 'a.md')} (project)`);
  });
});
