import type { Config } from '../../config/schema.js';
import type { AgentRecord } from '../../fleet/record.js';
import type { LoadResult } from '../../definitions/types.js';
import type { Layout } from '../../layout/layout.js';
import { unavailableChatActions, type ChatActions } from './actions.js';

/** What the pane's chat commands do for this agent (§6): the CLI's operations, with this agent as parent. */
export async function chatActionsFor(layout: Layout, config: Config, rec: AgentRecord): Promise<ChatActions> {
  const { loadDefinitions } = await import('../../definitions/load.js');
  // Lines typed in this pane come from the person at its terminal, so the approval's caller is
  // the harness's parent (tmux or their shell), not the harness, which approvals refuse (§11).
  const answer = async (id: string, decision: import('../../outputs/approve.js').Decision): Promise<string> => {
    const { answerRequest } = await import('../../outputs/approve.js');
    const done = await answerRequest(layout, config, id, decision, { pid: process.ppid, by: 'chat' });
    return `${decision.decision === 'approve' ? 'approved' : 'denied'} ${done.requestId} (${done.agentId})`;
  };
  const loaded = await loadDefinitions({ layout, config });
  const names = loaded.definitions.map((d) => d.name);
  return {
    ...unavailableChatActions(names),
    definitions: () => Promise.resolve(names),
    list: () => Promise.resolve(formatDefinitionList(loaded)),
    async spawn(name, prompt, opts) {
      const { spawnAgent } = await import('../../spawn/spawn.js');
      const { readRecord } = await import('../../fleet/registry.js');
      const child = await spawnAgent(layout, config, { agent: name, prompt, mode: 'interactive' }, { parent: readRecord(layout, rec.id) ?? rec, background: opts.background });
      return child.tmux ? `started ${child.id} (${child.name}) in window ${child.tmux.windowId}; its result comes back here` : `started ${child.id} (${child.name}) in the background; its result comes back here`;
    },
    async status() {
      const [{ listRecords }, { descendants }, { unreadCount }, { formatStatus }] = await Promise.all([
        import('../../fleet/registry.js'), import('../../lifecycle/signal.js'), import('../../inbox/maildir.js'), import('../../spawn/status-view.js'),
      ]);
      const records = listRecords(layout);
      const mine = [rec.id, ...descendants(rec.id, records).map((r) => r.id)];
      return formatStatus(records.filter((r) => mine.includes(r.id)).map((record) => ({ record, unread: unreadCount(layout, record.id) })));
    },
    async cancel(prefix) {
      const [{ resolveAgent }, { cancelAgent }] = await Promise.all([import('../../fleet/registry.js'), import('../../spawn/cancel.js')]);
      const target = resolveAgent(layout, prefix);
      const hit = await cancelAgent(layout, config, target, { by: 'human' });
      return hit.length ? `cancelled ${hit.join(', ')}` : `${target.id} had already ended (${target.status})`;
    },
    async send(to, text) {
      const [{ deliver }, { resolveRecipient }] = await Promise.all([import('../../inbox/deliver.js'), import('../../inbox/address.js')]);
      // A person typing in this pane sends as 'human'; 'parent' and 'root' are this agent's.
      const recipient = resolveRecipient(layout, to, rec.id);
      const { message } = await deliver(layout, { from: 'human', to: recipient, kind: 'message', body: text }, { maxBodyBytes: config.inbox.max_body_bytes });
      return `sent ${message.id} to ${recipient}`;
    },
    async resume(prefix, prompt) {
      const [{ planResume, resumingLine }, { spawnAgent }, { readRecord }] = await Promise.all([
        import('../../outputs/resume.js'), import('../../spawn/spawn.js'), import('../../fleet/registry.js'),
      ]);
      const plan = planResume(layout, config, prefix);
      // Started from this pane, the resumed agent is this agent's child (§6): its result comes back here.
      const child = await spawnAgent(layout, config, { agent: plan.definition, prompt, cwd: plan.cwd, mode: 'interactive', model: plan.model, resumedFrom: plan.oldId }, { parent: readRecord(layout, rec.id) ?? rec });
      return resumingLine(plan, child.id);
    },
    approve: (id) => answer(id, { decision: 'approve', scope: 'once' }),
    deny: (id, reason) => answer(id, { decision: 'deny', reason: reason ?? 'denied by a person' }),
    async output(prefix) {
      const { agentOutput } = await import('../../outputs/output.js');
      const { id, text } = agentOutput(layout, prefix);
      return `${id}:\n${text}`;
    },
    async collect() {
      const { collectFinished, formatCollected } = await import('../../outputs/collect.js');
      const results = collectFinished(layout);
      return results.length ? results.map(formatCollected).join('\n\n') : 'nothing new to collect';
    },
    async inbox() {
      const { list } = await import('../../inbox/read.js');
      const items = await list(layout, rec.id, { includeRead: true });
      if (items.length === 0) return 'no messages';
      return items.map((i) => `${i.read ? ' ' : '●'} ${i.message.id}  ${i.message.from}  ${i.message.kind}  ${i.message.summary}`).join('\n');
    },
  };
}

/** `/agent list`: one line per definition (name, description, model when set), then the files that did not load. */
export function formatDefinitionList(loaded: Pick<LoadResult, 'definitions' | 'errors'>): string {
  const defs = loaded.definitions;
  const width = Math.max(0, ...defs.map((d) => d.name.length));
  const lines = defs.map((d) => `${d.name.padEnd(width)}  ${d.description.replace(/\s+/g, ' ').trim()}${d.model ? `  (${d.model})` : ''}`);
  if (defs.length === 0) lines.push('no agent definitions — add one in .flotilla/agents/<name>.md (docs/definitions.md)');
  for (const e of loaded.errors) lines.push(`✗ ${e.message.includes(e.path) ? e.message : `${e.path}: ${e.message}`}`);
  return lines.join('\n');
}
