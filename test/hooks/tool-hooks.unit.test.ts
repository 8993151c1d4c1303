import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { matchesTool } from '../../src/hooks/matcher.js';
import { runLifecycleHooks, runPostToolUse, runPreToolUse, type HookContext } from '../../src/hooks/run-hooks.js';
import { definitionHooksSchema, type HookRunRecord } from '../../src/hooks/schema.js';
import { tempDir } from '../helpers/fleet.js';
import { isRunning } from './helpers.js';

let tmp: { dir: string; cleanup(): void };
let runs: HookRunRecord[];
let warnings: string[];
let ctx: HookContext;
beforeEach(() => {
  tmp = tempDir('flotilla-hooks-');
  runs = [];
  warnings = [];
  ctx = {
    agentId: 'worker-abc123',
    agentName: 'worker',
    parentId: 'lead-xyz789',
    cwd: tmp.dir,
    baseEnv: { ...process.env, SECRET: 'hunter2', ANTHROPIC_API_KEY: 'sk-test' },
    onRun: (r) => runs.push(r),
    onWarn: (w) => warnings.push(w),
  };
});
afterEach(() => tmp.cleanup());

const hooks = (pre: unknown[], post: unknown[] = []) =>
  definitionHooksSchema.parse({ PreToolUse: pre, PostToolUse: post });

describe('matchesTool', () => {
  it('matches |-separated substrings case-insensitively against canonical and Claude names', () => {
    expect(matchesTool('Edit|Write', 'edit')).toBe(true);
    expect(matchesTool('Edit|Write', 'write')).toBe(true);
    expect(matchesTool('Edit|Write', 'shell')).toBe(false);
    expect(matchesTool('Bash', 'shell')).toBe(true);
    expect(matchesTool('shell', 'Bash')).toBe(true);
    expect(matchesTool('SHELL', 'shell')).toBe(true);
    expect(matchesTool('agent', 'spawn_agent')).toBe(true);
    expect(matchesTool('', 'read')).toBe(true);
    expect(matchesTool('*', 'grep')).toBe(true);
    expect(matchesTool(undefined, 'grep')).toBe(true);
    expect(matchesTool('Read', 'grep')).toBe(false);
  });
});

describe('PreToolUse', () => {
  it('a fail_closed hook that exits 1 blocks the call with a reason naming its stderr', async () => {
    const h = hooks([
      {
        matcher: 'Edit|Write',
        hooks: [{ type: 'command', command: 'echo "generated files are read-only" >&2; exit 1', fail_closed: true }],
      },
    ]);
    const decision = await runPreToolUse(h, { name: 'write', input: { path: 'gen/x.ts', content: '' } }, ctx);
    expect(decision.allow).toBe(false);
    expect(decision.allow === false && decision.reason).toMatch(
      /^tool call blocked by a PreToolUse hook \(`echo .*`, exit 1\): generated files are read-only — /,
    );
    expect(runs).toEqual([
      expect.objectContaining({ hook: 'PreToolUse', exitCode: 1, timedOut: false, tool: 'write', blocked: true }),
    ]);
    // The matcher does not cover shell: no hook runs and the call goes ahead.
    expect(await runPreToolUse(h, { name: 'shell', input: { command: 'ls' } }, ctx)).toEqual({ allow: true });
    expect(runs).toHaveLength(1);
  });

  it('a hook that is not fail_closed and sleeps past its timeout is killed, warned about, and the call proceeds', async () => {
    const pids = join(tmp.dir, 'pids');
    // 5 s: the hook must get to write its pids before the timeout, on a loaded machine too.
    const h = hooks([
      { matcher: 'Bash', hooks: [{ command: `sleep 60 & echo "$$ $!" > ${pids}; wait`, timeout_secs: 5 }] },
    ]);
    const decision = await runPreToolUse(h, { name: 'shell', input: { command: 'make' } }, ctx);
    expect(decision).toEqual({ allow: true });
    const [hookPid, childPid] = readFileSync(pids, 'utf8').trim().split(' ').map(Number);
    // Whole pids, or "not running" below would hold for an empty file too.
    expect(hookPid).toBeGreaterThan(0);
    expect(childPid).toBeGreaterThan(0);
    expect(isRunning(hookPid!)).toBe(false);
    expect(isRunning(childPid!)).toBe(false);
    expect(runs).toEqual([
      expect.objectContaining({ hook: 'PreToolUse', timedOut: true, exitCode: null, tool: 'shell' }),
    ]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/timed out after 5s and was killed — the 'shell' call goes ahead/);
  });

  it('a fail_closed hook that times out blocks the call', async () => {
    const h = hooks([{ matcher: '', hooks: [{ command: 'sleep 60', timeout_secs: 0.3, fail_closed: true }] }]);
    const decision = await runPreToolUse(h, { name: 'read', input: { path: 'a' } }, ctx);
    expect(decision.allow === false && decision.reason).toMatch(/timed out after 0.3s/);
  });

  it('passes the call as JSON on stdin and exactly PATH plus FLOTILLA_* in the environment', async () => {
    const h = hooks([{ matcher: 'Edit', hooks: [{ command: 'env > env.txt; cat > stdin.json' }] }]);
    expect(await runPreToolUse(h, { name: 'Edit', input: { path: 'a.ts', old: 'x', new: 'y' } }, ctx)).toEqual({
      allow: true,
    });
    const lines = readFileSync(join(tmp.dir, 'env.txt'), 'utf8').trim().split('\n');
    const vars = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    // sh itself sets PWD (and some shells SHLVL, _); nothing else may come from the harness.
    for (const own of ['PWD', 'SHLVL', '_', 'OLDPWD']) delete vars[own];
    expect(vars).toEqual({
      PATH: process.env.PATH,
      FLOTILLA_AGENT_ID: 'worker-abc123',
      FLOTILLA_AGENT_NAME: 'worker',
      FLOTILLA_PARENT_ID: 'lead-xyz789',
      FLOTILLA_TOOL_NAME: 'edit',
    });
    expect(readFileSync(join(tmp.dir, 'env.txt'), 'utf8')).not.toContain('hunter2');
    expect(JSON.parse(readFileSync(join(tmp.dir, 'stdin.json'), 'utf8'))).toEqual({
      hook_event_name: 'PreToolUse',
      agent_id: 'worker-abc123',
      agent_name: 'worker',
      parent_id: 'lead-xyz789',
      cwd: tmp.dir,
      tool_name: 'edit',
      tool_input: { path: 'a.ts', old: 'x', new: 'y' },
    });
  });

  it('runs matching hooks in order and stops at the first blocking one', async () => {
    const h = hooks([
      { matcher: 'shell', hooks: [{ command: 'echo 1 >> order' }, { command: 'exit 2', fail_closed: true }] },
      { matcher: '*', hooks: [{ command: 'echo 3 >> order' }] },
    ]);
    const decision = await runPreToolUse(h, { name: 'shell', input: {} }, ctx);
    expect(decision.allow).toBe(false);
    expect(readFileSync(join(tmp.dir, 'order'), 'utf8')).toBe('1\n');
    expect(runs.map((r) => r.exitCode)).toEqual([0, 2]);
  });
});

describe('PostToolUse and lifecycle hooks', () => {
  it('PostToolUse gets the result on stdin; a failure is a warning', async () => {
    const h = hooks([], [{ matcher: 'Write', hooks: [{ command: 'cat > post.json; exit 5' }] }]);
    await runPostToolUse(h, { name: 'write', input: { path: 'a' }, output: 'wrote 3 bytes', isError: false }, ctx);
    expect(JSON.parse(readFileSync(join(tmp.dir, 'post.json'), 'utf8'))).toMatchObject({
      hook_event_name: 'PostToolUse',
      tool_name: 'write',
      tool_response: { output: 'wrote 3 bytes', is_error: false },
    });
    expect(runs).toEqual([expect.objectContaining({ hook: 'PostToolUse', exitCode: 5 })]);
    expect(warnings[0]).toMatch(/PostToolUse hook `cat > post.json; exit 5` exit 5 — the agent goes on/);
  });

  it('stop hooks get FLOTILLA_EXIT_REASON and the status on stdin', async () => {
    await runLifecycleHooks(
      'stop',
      [{ command: 'echo "$FLOTILLA_EXIT_REASON" > reason; cat > stop.json', timeout_secs: 5 }],
      {
        ...ctx,
        status: 'timed_out',
        exitReason: 'timeout',
      },
    );
    expect(readFileSync(join(tmp.dir, 'reason'), 'utf8')).toBe('timeout\n');
    expect(JSON.parse(readFileSync(join(tmp.dir, 'stop.json'), 'utf8'))).toMatchObject({
      hook_event_name: 'stop',
      status: 'timed_out',
      exit_reason: 'timeout',
    });
    expect(runs).toEqual([expect.objectContaining({ hook: 'stop', exitCode: 0 })]);
    expect(warnings).toEqual([]);
  });

  it('start hooks have no tool or exit reason in their environment', async () => {
    await runLifecycleHooks('start', [{ command: 'env > env.txt', timeout_secs: 5 }], ctx);
    const text = readFileSync(join(tmp.dir, 'env.txt'), 'utf8');
    expect(text).toContain('FLOTILLA_AGENT_ID=worker-abc123');
    expect(text).not.toMatch(/FLOTILLA_TOOL_NAME|FLOTILLA_EXIT_REASON|SECRET/);
  });
});
