import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/fleet/proc.js';
import { createRecord, endRecord } from '../../src/fleet/registry.js';
import { listNames, maildir } from '../../src/inbox/maildir.js';
import { recordSecretDigests } from '../../src/secrets/digests.js';
import { CLI, flotilla } from '../helpers/cli.js';
import { tempFleet, type TempFleet } from '../helpers/fleet.js';
import { recordInput } from '../helpers/records.js';

/**
 * `send` and `status` run from their own bundles, through V8's code cache (src/cli/fast.ts,
 * compile-cache.ts). Whatever state that cache is in, the user gets the same results.
 */

let fleet: TempFleet | undefined;
afterEach(() => fleet?.cleanup());

function setup(): { env: Record<string, string>; cacheDir: string } {
  fleet = tempFleet();
  const cacheHome = join(fleet.project, 'cache');
  return {
    env: { FLOTILLA_ROOT: fleet.layout.root, XDG_CACHE_HOME: cacheHome, FLOTILLA_AGENT_ID: '' },
    cacheDir: join(cacheHome, 'flotilla', 'v8'),
  };
}

const humanBodies = (): string[] => {
  const box = maildir(fleet!.layout, 'human');
  return listNames(box.new)
    .map((n) => readFileSync(join(box.new, n), 'utf8').split('\n---\n').at(-1)!.trim())
    .sort();
};

describe('the fast path', () => {
  it('delivers with no cache, writes one, and delivers again through it', async () => {
    const { env, cacheDir } = setup();
    const first = await flotilla(['send', 'human', 'one'], { env });
    expect(first.exitCode, String(first.stderr)).toBe(0);
    const caches = readdirSync(cacheDir).filter((n) => n.startsWith('fast-send-'));
    expect(caches).toHaveLength(1);
    const written = statSync(join(cacheDir, caches[0]!));
    const second = await flotilla(['send', 'human', 'two'], { env });
    expect(second.exitCode, String(second.stderr)).toBe(0);
    expect(second.stdout).toMatch(/^[0-9a-z]+$/);
    expect(humanBodies()).toEqual(['one', 'two']);
    // V8 took the cache: it is not written again (a refused one would be, under a new inode).
    expect(readdirSync(cacheDir).filter((n) => n.startsWith('fast-send-'))).toEqual(caches);
    const after = statSync(join(cacheDir, caches[0]!));
    expect([after.ino, after.mtimeMs]).toEqual([written.ino, written.mtimeMs]);
  });

  it('a corrupt cache costs a compile, never a message, and is replaced', async () => {
    const { env, cacheDir } = setup();
    expect((await flotilla(['send', 'human', 'warm'], { env })).exitCode).toBe(0);
    const [name] = readdirSync(cacheDir).filter((n) => n.startsWith('fast-send-'));
    writeFileSync(join(cacheDir, name!), Buffer.from('not a V8 code cache at all, just bytes'));
    const r = await flotilla(['send', 'human', 'after corruption'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(r.stderr).toBe('');
    expect(humanBodies()).toEqual(['after corruption', 'warm']);
    expect(readFileSync(join(cacheDir, name!)).length).toBeGreaterThan(1000);
  });

  it('works where no cache can be written', async () => {
    const { env } = setup();
    // The cache home is a file: every mkdir under it fails.
    writeFileSync(join(fleet!.project, 'not-a-dir'), '');
    const r = await flotilla(['send', 'human', 'no cache'], {
      env: { ...env, XDG_CACHE_HOME: join(fleet!.project, 'not-a-dir') },
    });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(r.stderr).toBe('');
    expect(humanBodies()).toEqual(['no cache']);
  });

  it('takes --root before or after the command, as the full CLI does', async () => {
    const { env } = setup();
    const other = join(fleet!.project, 'other-root');
    mkdirSync(other);
    const { FLOTILLA_ROOT: _, ...noRoot } = env;
    const before = await flotilla(['--root', other, 'send', 'human', 'before'], { env: noRoot, cwd: fleet!.project });
    const after = await flotilla(['send', 'human', 'after', '--root', other], { env: noRoot, cwd: fleet!.project });
    expect([before.exitCode, after.exitCode]).toEqual([0, 0]);
    const box = join(other, 'state', 'inbox', 'human', 'new');
    const bodies = readdirSync(box)
      .map((n) => readFileSync(join(box, n), 'utf8').split('\n---\n').at(-1)!.trim())
      .sort();
    expect(bodies).toEqual(['after', 'before']);
    const status = await flotilla(['status', '--json', '--root', other], { env: noRoot, cwd: fleet!.project });
    expect(status.exitCode, String(status.stderr)).toBe(0);
    expect(JSON.parse(String(status.stdout))).toEqual([]);
  });

  it('hands help and mistakes to the full CLI', async () => {
    const { env } = setup();
    const help = await flotilla(['send', '--help'], { env });
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('Usage: flotilla send [options] [to] [text...]');
    const bad = await flotilla(['send', 'human', 'x', '--priority', 'soon'], { env });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(
      /^flotilla: option '--priority <level>' argument 'soon' is invalid\. Allowed choices are low, normal, high, urgent\. — run 'flotilla send --help' for usage$/,
    );
    expect(humanBodies()).toEqual([]);
  });

  it('hands what its bundle leaves out (a group, an unseen config file) to the full CLI, stdin unread', async () => {
    const { env, cacheDir } = setup();
    // The bundle holds no broadcast code: that is what the hand-over is for.
    expect(readFileSync(CLI.replace(/main\.js$/, 'fast-send.js'), 'utf8')).not.toContain(
      '// src/lifecycle/broadcast.ts',
    );
    // A live agent for the group: a real process, not among the sender's ancestors.
    const agent = spawn('sleep', ['60'], { stdio: 'ignore' });
    const pid = agent.pid!;
    createRecord(fleet!.layout, recordInput('w', { status: 'working', pid, pidStartTime: processStartTime(pid) }));
    const group = await flotilla(['send', '--to', 'all'], { env, input: 'to every agent' }).finally(() => agent.kill());
    expect(group.exitCode, String(group.stderr)).toBe(0);
    expect(group.stderr).toMatch(/broadcast \S+ to all: 1 copy \(w\)/);
    // That run compiled only part of a send: it leaves no code cache for the next to reuse.
    expect(existsSync(cacheDir) ? readdirSync(cacheDir).filter((n) => n.startsWith('fast-send-')) : []).toEqual([]);
    const box = maildir(fleet!.layout, 'w');
    expect(
      listNames(box.new).map((n) => readFileSync(join(box.new, n), 'utf8').split('\n---\n').at(-1)!.trim()),
    ).toEqual(['to every agent']);
    // A config file the config cache has not seen yet: its limit holds for a body read from stdin.
    writeFileSync(fleet!.layout.configFile, 'inbox:\n  max_body_bytes: 10\n');
    const long = await flotilla(['send', 'human'], { env, input: 'longer than ten bytes' });
    expect(long.exitCode).toBe(1);
    expect(long.stderr).toContain('over the 10 bytes limit (inbox.max_body_bytes)');
    expect((await flotilla(['send', 'human'], { env, input: 'short' })).exitCode).toBe(0);
    expect(humanBodies()).toEqual(['short']);
    // A send done whole on the fast path writes it.
    expect(readdirSync(cacheDir).filter((n) => n.startsWith('fast-send-'))).toHaveLength(1);
  });

  it("an agent with no door sends on the fast path, as itself, the fleet's secrets redacted", async () => {
    const { env, cacheDir } = setup();
    // This test's process registered as an agent (no harness, so no door): the send's ancestry finds it.
    createRecord(
      fleet!.layout,
      recordInput('lead-4f8k2p', { status: 'working', pid: process.pid, pidStartTime: processStartTime(process.pid) }),
    );
    recordSecretDigests(fleet!.layout, 'DEPLOY_TOKEN', 'tok-93kd8s7f6g5h');
    const r = await flotilla(['send', 'human', 'the token is tok-93kd8s7f6g5h'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const box = maildir(fleet!.layout, 'human');
    const [name] = listNames(box.new);
    const text = readFileSync(join(box.new, name!), 'utf8');
    expect(text).toMatch(/^from: lead-4f8k2p$/m);
    expect(text).not.toContain('tok-93kd8s7f6g5h');
    expect(humanBodies()).toEqual(['the token is [secret:DEPLOY_TOKEN]']);
    // The fast bundle did the whole send (one handed to the full CLI leaves no code cache, above).
    expect(readdirSync(cacheDir).filter((n) => n.startsWith('fast-send-'))).toHaveLength(1);
  });

  it('on a maildir fleet no fast command reads the NATS client, which is its own file', async () => {
    const { env, cacheDir } = setup();
    for (const args of [['status'], ['task', 'list'], ['review'], ['send', 'human', 'hi']]) {
      const r = await flotilla(args, { env });
      expect(r.exitCode, `${args.join(' ')}: ${String(r.stderr)}`).toBe(0);
    }
    // Each bundle that ran wrote its code cache; the client's file, had any run read it, would have one too.
    // A cache's name: the bundle, its path's hash, its build (a fast bundle's content hash, else size and mtime), Node.
    const caches = readdirSync(cacheDir).map((n) =>
      n.replace(/-[^-]+-(?:[0-9a-f]{16}|\d+-\d+)-v[\d.]+-\w+\.cache$/, ''),
    );
    // start.js is the router every command's main.js loads (src/cli/main.ts).
    expect(caches.sort()).toEqual(['fast-review', 'fast-send', 'fast-status', 'fast-task', 'start']);
    expect(readFileSync(CLI.replace(/main\.js$/, 'fast-status.js'), 'utf8')).not.toContain('node_modules/@nats-io/');
  });

  it('status lists the last 100 to finish and counts the rest, with thousands separated', async () => {
    const { env } = setup();
    for (let i = 0; i < 1_105; i++) {
      const id = `old-${String(i).padStart(5, '0')}`;
      createRecord(fleet!.layout, recordInput(id, { status: 'working', startedAt: new Date().toISOString() }));
      endRecord(fleet!.layout, id, { status: 'completed' });
    }
    const r = await flotilla(['status'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const lines = String(r.stdout).split('\n');
    expect(lines.filter((l) => /^old-\d{5}\s+completed/.test(l))).toHaveLength(100);
    expect(lines).toContain('… 1,005 finished — flotilla status --all');
    const all = await flotilla(['status', '--all', '--json'], { env });
    expect((JSON.parse(String(all.stdout)) as unknown[]).length).toBe(1_105);
  });
});
