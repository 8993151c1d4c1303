import { execa } from 'execa';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readTranscript } from '../../src/transcript/reader.js';
import { CLI, SPAWN_AGENT } from '../helpers/cli.js';
import { scriptCalls, toolOutput, userTexts } from '../helpers/scripts.js';
import { eventually } from '../helpers/tmux.js';
import { completionsFrom, fixture, spawnFleet, type SpawnFleet } from './helpers.js';

// A result the model already has from a tool (or from its own shell's spawn-agent --wait) is never shown to it
// again as mail, and `spawn-agent --wait` gives back the answer of the task it started, whatever came after.
beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
});

let f: SpawnFleet | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const inCur = (fl: SpawnFleet, owner: string, from: string) =>
  completionsFrom(fl, owner, from).filter((m) => m.file!.startsWith('cur/'));

describe('results handed over by a tool are claimed', () => {
  it("wait_for_agents returns a child's completion: it is claimed, and the parent's later model calls never see it as inbox mail", async () => {
    f = spawnFleet({ definitions: { lead: 'lead-wait-one.yaml', worker: 'worker.yaml' } });
    const log = join(f.project, 'calls.jsonl');
    const r = await f.spawnAgent(['--wait', '--agent', 'lead', '--id', 'lead-w', 'delegate'], {
      FLOTILLA_SCRIPT_LOG: log,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('Got it.');
    expect(r.stdout).toContain('result-of-w-one');

    // The completion reaches the parent's inbox (it may come just after the wait returned) and is claimed there.
    await eventually(
      () => inCur(f!, 'lead-w', 'w-one').length === 1,
      60_000,
      "the child's completion claimed by the parent",
    );
    expect(completionsFrom(f, 'lead-w', 'w-one')).toHaveLength(1);

    // A person's follow-up starts a second task; the mail it surfaces is the follow-up alone.
    const sent = await f.flotilla(['send', 'lead-w', 'follow-up-7731']);
    expect(sent.exitCode).toBe(0);
    await eventually(() => completionsFrom(f!, 'human', 'lead-w').length >= 2, 60_000, 'the follow-up answered');

    const pid = f.record('lead-w').pid;
    const calls = scriptCalls(log).filter((c) => c.pid === pid);
    const inbox = calls.flatMap((c) => userTexts(c)).filter((t) => t.includes('<inbox-message'));
    expect(inbox.some((t) => t.includes('follow-up-7731'))).toBe(true);
    expect(inbox.filter((t) => /<inbox-message[^>]*from="w-one"/.test(t))).toEqual([]);
    // One answer per task: the delegated one and the follow-up, nothing more.
    expect(completionsFrom(f, 'human', 'lead-w')).toHaveLength(2);

    // The transcript says the completion was read through the tool, by its file name.
    const file = inCur(f, 'lead-w', 'w-one')[0]!
      .file!.slice('cur/'.length)
      .replace(/:2,.*$/, '');
    const taken = readTranscript(f.layout, 'lead-w').entries.filter(
      (e) => e.type === 'surfaced' && e.source === 'inbox' && e.via === 'tool',
    );
    expect(taken.flatMap((e) => (e.type === 'surfaced' && e.source === 'inbox' ? (e.files ?? []) : []))).toContain(
      file,
    );
  }, 180_000);

  it("the parent's shell runs spawn-agent --wait: the child's answer reaches its model once, in the shell's output, and never again as mail", async () => {
    f = spawnFleet({ definitions: { lead: 'lead-shell-wait.yaml', worker: 'worker.yaml' } });
    const log = join(f.project, 'calls.jsonl');
    const r = await f.spawnAgent(['--wait', '--agent', 'lead', '--id', 'lead-sh', 'delegate'], {
      FLOTILLA_SCRIPT_LOG: log,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('Got it. Answer: result-of-w-sh');
    // The child's completion reaches the parent's inbox (maybe after the wait returned) and is read there.
    await eventually(() => inCur(f!, 'lead-sh', 'w-sh').length === 1, 60_000, "the child's completion read");

    // A person's follow-up: the turn it starts carries any mail still unread, and is answered.
    expect((await f.flotilla(['send', 'lead-sh', 'follow-up-5512'])).exitCode).toBe(0);
    const pid = f.record('lead-sh').pid;
    const calls = () => scriptCalls(log).filter((c) => c.pid === pid);
    await eventually(
      () => calls().some((c) => userTexts(c).some((t) => t.includes('follow-up-5512'))),
      60_000,
      'the follow-up seen',
    );
    await eventually(() => completionsFrom(f!, 'human', 'lead-sh').length >= 2, 60_000, 'the follow-up answered');

    const inbox = calls()
      .flatMap((c) => userTexts(c))
      .filter((t) => t.includes('<inbox-message'));
    expect(inbox.filter((t) => /<inbox-message[^>]*from="w-sh"/.test(t))).toEqual([]);
    // The whole conversation, as the last call sent it: the answer once, as the shell's output.
    const last = calls().at(-1)!;
    const shown = last.prompt
      .filter((m) => m.role !== 'assistant')
      .map((m) => JSON.stringify(m.content))
      .join('\n');
    expect(shown.split('result-of-w-sh').length - 1).toBe(1);
    expect(toolOutput(last, 'shell')).toContain('result-of-w-sh');
    // One answer per task: the delegated one and the follow-up; the completion started none.
    expect(completionsFrom(f, 'human', 'lead-sh')).toHaveLength(2);
    expect(completionsFrom(f, 'lead-sh', 'w-sh')).toHaveLength(1);
  }, 180_000);

  it("a persistent agent given a follow-up right after its first task: spawn-agent --wait still prints the first task's answer", async () => {
    f = spawnFleet();
    const waiter = execa(
      SPAWN_AGENT,
      ['--wait', '--id', 'pers', '--model', `script:${fixture('persist.yaml')}`, 'first task'],
      {
        cwd: f.project,
        env: f.env,
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
      },
    );
    try {
      await eventually(() => existsSync(join(f!.project, 'started')), 60_000, 'the first task under way');
      // The waiter is held still while the agent ends task 1 and answers a follow-up in task 2.
      process.kill(waiter.pid!, 'SIGSTOP');
      writeFileSync(join(f.project, 'go'), '');
      await eventually(
        () => f!.record('pers').lastTask?.task === 1 && f!.record('pers').status === 'idle',
        60_000,
        'task 1 answered',
      );
      expect((await f.flotilla(['send', 'pers', 'one more thing'])).exitCode).toBe(0);
      await eventually(
        () => f!.record('pers').lastTask?.task === 2 && f!.record('pers').status === 'idle',
        60_000,
        'task 2 answered',
      );
    } finally {
      process.kill(waiter.pid!, 'SIGCONT');
    }
    const r = await waiter;
    expect(r.exitCode).toBe(0);
    expect(String(r.stdout)).toBe('Answer one: task-one-done');
    // Each task's answer keeps its own file; output/<id>.md is the latest one.
    const out = await f.flotilla(['output', 'pers']);
    expect(out.stdout).toBe('Answer two: task-two-done');
    expect(readdirSync(join(f.layout.outputDir, 'pers.tasks')).sort()).toEqual(['1.json', '1.md', '2.json', '2.md']);
  }, 180_000);
});
