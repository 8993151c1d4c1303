import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FlotillaError } from '../../src/errors.js';
import { openDoor, type Door, type DoorRequest } from '../../src/inbox/door.js';
import { doorClient } from '../helpers/door-client.js';

/**
 * tools/door-hook: a sandboxed vendor CLI's hook command (harness/cli-host/cli-launch.ts). It
 * must hand the door the request the Node client (cli/door-forward.ts) would — `run` of
 * `runtime-hook <event>`, the caller's cwd, the payload byte for byte — and give the CLI the
 * harness's answer exactly: stdout, stderr, exit code (2 is "block" to Claude and Codex).
 * A real door on a real socket; the harness's side is a handler that records what it got.
 */
// What a payload or an answer may hold: quotes, backslashes, newlines, control bytes, non-ASCII, a marker.
const AWKWARD = 'say "hi" \\ back\\slash\nline two\ttab \u0001\u001f é ✉ 🚀 </inbox-message> {"exitCode":9} \\u0041 /';

let dir: string;
let door: Door | undefined;
afterEach(() => {
  door?.close();
  door = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function doorAnswering(
  answer: (req: DoorRequest) => Record<string, unknown>,
): Promise<{ path: string; got: DoorRequest[] }> {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-door-hook-')));
  const got: DoorRequest[] = [];
  door = await openDoor(join(dir, 'doors', 'a.sock'), 1 << 20, async (req) => {
    got.push(req);
    return answer(req);
  });
  return { path: door.path, got };
}

function hook(event: string, path: string | undefined, input: string, fallback?: string[]) {
  return doorClient('door-hook', event, { cwd: dir, door: path, input, ...(fallback ? { fallback } : {}) });
}

describe('tools/door-hook, the hook client without a Node start', () => {
  it('asks the door to run runtime-hook <event> with the payload byte for byte, from its cwd', async () => {
    const d = await doorAnswering(() => ({ stdout: '', stderr: '', exitCode: 0 }));
    const payload = JSON.stringify({ prompt: AWKWARD, tool_input: { command: 'echo "$HOME"' } });
    const r = await hook('turn-start', d.path, payload);
    expect(r.exitCode).toBe(0);
    expect(d.got).toEqual([{ op: 'run', args: ['runtime-hook', 'turn-start'], cwd: dir, stdin: payload }]);
  });

  it("gives the CLI the harness's answer exactly: stdout, stderr and exit code", async () => {
    const d = await doorAnswering(() => ({ stdout: `${AWKWARD}\n`, stderr: `warn: ${AWKWARD}`, exitCode: 2 }));
    const r = await hook('turn-end', d.path, '{}');
    expect(r.stdout).toBe(`${AWKWARD}\n`);
    expect(r.stderr).toBe(`warn: ${AWKWARD}`);
    expect(r.exitCode).toBe(2);
  });

  it('a refusal is one line on stderr with its exit code, as the Node client reports it', async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-door-hook-')));
    door = await openDoor(join(dir, 'doors', 'a.sock'), 1 << 20, async () => {
      throw new FlotillaError("the door runs only spawn — 'x' is a person's to run", { exitCode: 2 });
    });
    const r = await hook('pre-tool', door.path, '{}');
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe("flotilla: the door runs only spawn — 'x' is a person's to run\n");
    expect(r.exitCode).toBe(2);
  });

  // Both perl clients, the hook's and the MCP pipe's (tools/door-pipe), fail and fall back alike.
  it.each([
    ['door-hook', 'turn-start'],
    ['door-pipe', 'mcp'],
  ] as const)('%s: with no door to reach it says where it looked and fails', async (tool, first) => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-door-client-')));
    const r = await doorClient(tool, first, { cwd: dir, door: join(dir, 'gone.sock'), input: '{}' });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^flotilla: cannot reach this agent's harness at .*gone\.sock/);
  });

  it.each([
    ['door-hook', 'turn-start', 'runtime-hook turn-start'],
    ['door-pipe', 'mcp', 'mcp'],
  ] as const)(
    '%s: without FLOTILLA_DOOR it runs the Node client instead, its stdin untouched',
    async (tool, first, args) => {
      dir = realpathSync(mkdtempSync(join(tmpdir(), 'flotilla-door-client-')));
      // A stand-in for `node <cli>`: sh runs the script, which shows its arguments and input.
      const script = join(dir, 'cli.sh');
      writeFileSync(script, 'echo "args: $*"; cat\n');
      const r = await doorClient(tool, first, {
        cwd: dir,
        door: undefined,
        input: 'the input',
        fallback: ['/bin/sh', script],
      });
      expect(r.stdout).toBe(`args: ${args}\nthe input`);
      expect(r.exitCode).toBe(0);
    },
  );
});
