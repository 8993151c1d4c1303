import { describe, expect, it } from 'vitest';
import { buildSystemPrompt, type PromptIdentity } from '../../src/harness/system-prompt.js';

/**
 * The system prompt's tool lines come from the tools' own files (src/tools/, `prompt`): shown only for tools the agent
 * has.
 */
const me: PromptIdentity = { id: 'lead-3kd9p1', name: 'lead', depth: 0, maxDepth: 2, cwd: '/w', mode: 'headless' };

describe('the system prompt names only the tools the agent has', () => {
  it('an agent that may spawn and merge is told how, in order', () => {
    const text = buildSystemPrompt({ identity: me, body: '', tools: ['spawn_agent', 'merge_work', 'send_message'] });
    const delegation = text.slice(text.indexOf('# Delegation'), text.indexOf('# Messages')).trim().split('\n');
    expect(delegation).toEqual([
      '# Delegation',
      'You may split work over child agents with the spawn_agent tool (or `spawn-agent "task"` in the shell). Each child is a full agent in its own tmux window.',
      '- Give each child one clear, self-contained task; it does not see your conversation unless you pass context.',
      '- spawn_agent returns the child id at once. Use wait_for_agents with the ids to block until they finish; their results also come back to you as completion messages in your inbox.',
      '- list_agents shows your children and their state; cancel_agent stops one.',
      '- A child spawned with worktree: true commits on its own branch; merge_work brings its branch into the branch its worktree was made from once it is done.',
    ]);
    expect(text).toContain("Use send_message to reach another agent by id, 'parent', 'root' or 'human'");
  });

  it('without merge_work or send_message their lines are left out; without spawn_agent, the whole section', () => {
    const spawner = buildSystemPrompt({ identity: me, body: '', tools: ['spawn_agent'] });
    expect(spawner).toContain('# Delegation');
    expect(spawner).not.toContain('merge_work');
    expect(spawner).not.toContain('send_message');
    const alone = buildSystemPrompt({ identity: me, body: '', tools: ['merge_work', 'read'] });
    expect(alone).not.toContain('# Delegation');
    expect(alone).not.toContain('merge_work');
  });

  it('at the depth limit there is no delegation section, even with spawn_agent', () => {
    const deep = buildSystemPrompt({ identity: { ...me, depth: 2 }, body: '', tools: ['spawn_agent'] });
    expect(deep).not.toContain('# Delegation');
  });
});
