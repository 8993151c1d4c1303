import { existsSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPL_DIST, startPane, type PaneRun } from './pane-harness.js';

// The pane runs from the built dist/ (npm test builds first; by hand: npx tsc -p tsconfig.build.json).
beforeAll(() => {
  if (!existsSync(REPL_DIST)) throw new Error(`${REPL_DIST} is missing: run npx tsc -p tsconfig.build.json first`);
});

let pane: PaneRun | undefined;
afterEach(async () => {
  await pane?.close();
  pane = undefined;
});

const approval = {
  type: 'approval',
  request: {
    id: 'appr-1',
    agentId: 'lead-ab12cd',
    tool: 'shell',
    summary: '$ rm -rf build',
    createdAt: new Date().toISOString(),
  },
};

describe('interactive pane in tmux', () => {
  it('queues a line typed while the agent works and says so', async () => {
    pane = await startPane();
    pane.control({ busy: true });
    await pane.waitFor(/lead-ab12cd · working/);
    await pane.type('please also add tests');
    await pane.keys('Enter');
    const call = await pane.waitForCall((c) => c.call === 'submitHuman', 'submitHuman');
    expect(call.text).toBe('please also add tests');
    const screen = await pane.waitFor(/\(queued: will be given to the agent at the next step\)/);
    // The person's line stays in the scrollback, above the notice.
    expect(screen).toMatch(/› please also add tests\n\(queued: will be given/);
  });

  it('a line typed while idle starts a task without the queued notice', async () => {
    pane = await startPane();
    await pane.type('count the TODOs');
    await pane.keys('Enter');
    const call = await pane.waitForCall((c) => c.call === 'submitHuman', 'submitHuman');
    expect(call.text).toBe('count the TODOs');
    await pane.waitFor(/› count the TODOs/);
    expect(await pane.tmux.capture(pane.target)).not.toMatch(/queued/);
  });

  it('output arriving while the person types leaves the half-typed input on the prompt line', async () => {
    pane = await startPane({ scripted: true });
    pane.control({ busy: true });
    await pane.waitFor(/working/);
    await pane.type('stop and rea');
    await pane.waitFor(/› stop and rea/);
    const shellCall = { id: 'c1', name: 'shell', input: { command: 'git status' } };
    pane.control(
      { emit: { type: 'text_delta', text: 'Let me look at the ' } },
      { emit: { type: 'text_delta', text: 'repository.\nChecking status now.' } },
    );
    // A second batch after the first is drawn: the live area must be erased and redrawn, not stacked.
    await pane.waitFor(/Checking status now\./);
    pane.control(
      { emit: { type: 'tool_call', call: shellCall } },
      {
        emit: {
          type: 'tool_result',
          call: shellCall,
          durationMs: 12,
          result: { output: 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n[exit code 0]' },
        },
      },
      {
        emit: {
          type: 'message_surfaced',
          message: { role: 'user', content: 'x' },
          injection: {
            source: 'inbox',
            text: '<inbox-message id=m1 from=worker-zz1111 kind=completion priority=normal summary="Found 3 TODOs">body</inbox-message>',
          },
        },
      },
      { emit: { type: 'text_delta', text: 'STREAM-END' } },
    );
    await pane.waitFor(/STREAM-END/);
    const lines = await pane.screenLines();
    // Output above, then the status line, then the prompt with the partial input intact.
    expect(lines.at(-1)).toBe('› stop and rea');
    // 80 columns leave no room for the model name, but the scripted marker always shows.
    expect(lines.at(-2)).toBe('lead-ab12cd · working · depth 0/3 · turn 1/20 · 0 tok [scripted model]');
    expect(lines.at(-3)).toBe('STREAM-END');
    // Exactly one status line and one prompt: earlier drawings of the live area were erased.
    expect(lines.filter((l) => l.startsWith('lead-ab12cd · '))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('› '))).toEqual(['› stop and rea']);
    const text = lines.join('\n');
    expect(text).toContain('Let me look at the repository.\nChecking status now.\n$ git status\n  l1\n');
    expect(text).toContain('  l5\n  … (3 more lines)\n');
    expect(text).toContain('✉ from worker-zz1111 (completion): Found 3 TODOs');
    expect(text).not.toContain('[exit code 0]');
    // The typed text is still readline's line: finishing it submits the whole thing.
    await pane.type('d the spec');
    await pane.keys('Enter');
    const call = await pane.waitForCall((c) => c.call === 'submitHuman', 'submitHuman');
    expect(call.text).toBe('stop and read the spec');
  });

  it('a chat command typed while text streams goes above the streamed line, which goes on unbroken', async () => {
    pane = await startPane({ scripted: true });
    pane.control({ busy: true });
    await pane.waitFor(/working/);
    pane.control({ emit: { type: 'text_delta', text: 'The answer is ' } });
    await pane.waitFor(/The answer is/);
    await pane.type('/inbox');
    await pane.keys('Enter');
    await pane.waitFor(/\/inbox is not yet available/);
    pane.control({ emit: { type: 'text_delta', text: 'forty-two, as computed.\nNext line.' } });
    await pane.waitFor(/Next line\./);
    const lines = await pane.screenLines();
    expect(lines).toContain('The answer is forty-two, as computed.');
    // The command and its reply sit above the streamed text, each once.
    const at = (s: string) => lines.findIndex((l) => l.startsWith(s));
    expect(at('› /inbox')).toBeGreaterThan(-1);
    expect(at('/inbox is not yet available')).toBeGreaterThan(at('› /inbox'));
    expect(at('The answer is forty-two')).toBeGreaterThan(at('/inbox is not yet available'));
    expect(lines.filter((l) => l.startsWith('The answer is'))).toHaveLength(1);
  });

  it('Ctrl-C once aborts the turn; Ctrl-C again exits as cancelled', async () => {
    pane = await startPane();
    pane.control({ busy: true });
    await pane.waitFor(/working/);
    await pane.keys('C-c');
    await pane.waitForCall((c) => c.call === 'abortTurn', 'abortTurn');
    await pane.waitFor(/aborted — type to continue, Ctrl-C again to exit/);
    expect(pane.calls().some((c) => c.call === 'shutdown')).toBe(false);
    await pane.keys('C-c');
    const call = await pane.waitForCall((c) => c.call === 'shutdown', 'shutdown');
    expect(call).toMatchObject({ status: 'cancelled', reason: 'interrupted by user' });
    await pane.waitForCall((c) => c.call === 'exited', 'the REPL to resolve');
  });

  it('Ctrl-D when idle closes the agent as completed', async () => {
    pane = await startPane();
    await pane.keys('C-d');
    const call = await pane.waitForCall((c) => c.call === 'shutdown', 'shutdown');
    expect(call).toMatchObject({ status: 'completed', reason: 'closed by user' });
    await pane.waitForCall((c) => c.call === 'exited', 'the REPL to resolve');
  });

  it('asks an approval and answers `n too risky` as a denial with that reason', async () => {
    pane = await startPane();
    pane.control({ busy: true }, { emit: approval });
    await pane.waitFor(
      /Allow shell: \$ rm -rf build \?\n(?:.*\n)?\[y\]es once \/ \[a\]lways for this tool \/ \[n\]o \(reason\) › /,
    );
    await pane.type('n too risky');
    await pane.keys('Enter');
    const call = await pane.waitForCall((c) => c.call === 'answerApproval', 'answerApproval');
    expect(call.answer).toEqual({ requestId: 'appr-1', decision: 'deny', reason: 'too risky' });
    // The line answered the question; it was not given to the model.
    expect(pane.calls().some((c) => c.call === 'submitHuman')).toBe(false);
    await pane.waitFor(/\n› \s*$/);
  });

  it('an approval answered elsewhere cancels the question', async () => {
    pane = await startPane();
    pane.control({ busy: true }, { emit: approval });
    await pane.waitFor(/\[n\]o \(reason\) › /);
    pane.control({ emit: { type: 'approval_resolved', requestId: 'appr-1', decision: 'deny', by: 'cli' } });
    await pane.waitFor(/approval appr-1 denied \(answered with flotilla approve\/deny\)/);
    await pane.type('y');
    await pane.keys('Enter');
    // `y` is now an ordinary line for the agent, not an answer.
    const call = await pane.waitForCall((c) => c.call === 'submitHuman', 'submitHuman');
    expect(call.text).toBe('y');
    expect(pane.calls().some((c) => c.call === 'answerApproval')).toBe(false);
  });

  it('a failing chat action prints one line and the REPL keeps running', async () => {
    pane = await startPane();
    await pane.type('/agent cancel worker-zz');
    await pane.keys('Enter');
    await pane.waitFor(/✗ 'worker-zz' matches 2 agents: worker-zz1111, worker-zz2222 — give more characters/);
    await pane.type('/agent frobnicate');
    await pane.keys('Enter');
    await pane.waitFor(/unknown subcommand '\/agent frobnicate'/);
    await pane.type('hello after the error');
    await pane.keys('Enter');
    const call = await pane.waitForCall((c) => c.call === 'submitHuman', 'submitHuman');
    expect(call.text).toBe('hello after the error');
  });

  it('@known spawns through the chat actions; @path goes to the model', async () => {
    pane = await startPane();
    await pane.type('@worker find the TODOs');
    await pane.keys('Enter');
    const spawn = await pane.waitForCall((c) => c.call === 'spawn', 'spawn');
    expect(spawn).toMatchObject({ name: 'worker', prompt: 'find the TODOs', background: false });
    await pane.waitFor(/spawned worker-new123/);
    await pane.type('@src/main.ts explain');
    await pane.keys('Enter');
    const call = await pane.waitForCall((c) => c.call === 'submitHuman', 'submitHuman');
    expect(call.text).toBe('@src/main.ts explain');
  });
});
