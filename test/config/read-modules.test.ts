import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { testHome, type TestHome } from '../helpers/home.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';

/**
 * Every spawn in a new fleet and a person's first command read the config before its cache is
 * written (§14). That read checks the config with the validator generated from the zod schema
 * and parses only files that exist: a new fleet's read loads neither zod nor the YAML parser, a
 * good file loads the parser only, and only a bad one loads zod — to say what is wrong, in the
 * same one line as before.
 */

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/config/${name}`, import.meta.url));

let fleet: TempFleet | undefined;
let home: TestHome | undefined;
afterEach(() => {
  fleet?.cleanup();
  home?.cleanup();
});

/** A first read of the fleet's config in a fresh process: what it printed and the packages it loaded. */
function firstRead(projectConfig: string | null): {
  stdout: string;
  stderr: string;
  status: number | null;
  packages: string[];
} {
  fleet = tempFleet();
  home = testHome('pristine');
  if (projectConfig !== null) {
    // The config file a person writes is what the read is about (none: a new user's fleet).
    mkdirSync(fleet.layout.root, { recursive: true });
    writeFileSync(fleet.layout.configFile, projectConfig);
  }
  const log = join(fleet.project, 'modules.log');
  writeFileSync(log, '');
  const r = spawnSync(
    process.execPath,
    ['--import', fixture('log-modules.mjs'), fixture('read-config.mjs'), fleet.layout.root, fleet.project],
    {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: home.dir,
        XDG_CONFIG_HOME: join(home.dir, '.config'),
        MODULE_LOG: log,
      },
    },
  );
  const packages = [
    ...new Set(
      readFileSync(log, 'utf8')
        .split('\n')
        .map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
        .filter((p): p is string => p !== undefined),
    ),
  ].sort();
  return { stdout: r.stdout, stderr: r.stderr, status: r.status, packages };
}

describe("a new fleet's first config read", () => {
  it('with no config file: the defaults, and neither zod nor yaml loaded', () => {
    const r = firstRead(null);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ max_depth: 3, max_running: 8 });
    expect(r.packages).not.toContain('zod');
    expect(r.packages).not.toContain('yaml');
  });

  it('with a good config file: its values, read with yaml and without zod', () => {
    const r = firstRead('limits:\n  max_depth: 2\n  max_running: 2\n');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ max_depth: 2, max_running: 2, max_children: 4 });
    expect(r.packages).toContain('yaml');
    expect(r.packages).not.toContain('zod');
  });

  it('with a bad config file: the same one line naming the file, the key and what to do', () => {
    const r = firstRead('limits:\n  max_running: 0\n');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `${fleet!.layout.configFile}: 'limits.max_running' Too small: expected number to be >0, found 0 — fix the value or remove the key\n`,
    );
  });
});
