import type { Config } from '../../config/schema.js';
import type { AgentRecord } from '../../fleet/record.js';
import type { LoadResult } from '../../definitions/types.js';
import type { Layout } from '../../layout/layout.js';
import type { DefinitionsChange } from '../../definitions/live.js';
import { unavailableChatActions, type ChatActions } from './actions.js';
import type { TaskChatAction } from './parse.js';
import { CHAT_ERROR_PREFIX } from './run.js';

/** A pane's chat commands, and the notices they have for the pane when definitions or config change. */
export interface PaneChat {
  actions: ChatActions;
  notices: { subscribe(fn: (line: string) => void): () => void };
  close(): void;
}

/**
 * What the pane's chat commands do for this agent (§6): the CLI's operations, with this agent
 * as parent. Definitions and config are live (`LiveDefinitions`, `LiveConfig`): a file added,
 * changed or removed is seen by `/agent list` and `@name` within a second, without a restart.
 */
export async function chatActionsFor(layout: Layout, initialConfig: Config, rec: AgentRecord): Promise<PaneChat> {
  const [{ loadDefinitions }, { definitionDirs }, { LiveDefinitions }, { LiveConfig }] = await Promise.all([
    import('../../definitions/load.js'),
    import('../../definitions/locations.js'),
    import('../../definitions/live.js'),
    import('../../config/live.js'),
  ]);
  const listeners = new Set<(line: string) => void>();
  const notify = (line: string): void => {
    for (const fn of listeners) fn(line);
  };
  // Set once the definitions are loaded; a config change before that has nothing to reload.
  const loaded: { defs?: import('../../definitions/live.js').LiveDefinitions } = {};
  const live = new LiveConfig(layout, initialConfig, {
    onChange: (c) => {
      notify(
        c.error
          ? `${CHAT_ERROR_PREFIX}${c.error}`
          : 'config reloaded: chat commands use it now (this agent keeps the limits it was spawned with)',
      );
      // Definitions take defaults from the config (permission mode, max_turns).
      void loaded.defs?.reload();
    },
  });
  const definitions = await LiveDefinitions.open({
    load: () => loadDefinitions({ layout, config: live.current }),
    folders: definitionDirs(layout).map((d) => d.dir),
    onChange: (c) => {
      for (const line of describeDefinitionsChange(c)) notify(line);
    },
  });
  loaded.defs = definitions;
  const actions = liveChatActions(
    layout,
    () => live.current,
    rec,
    () => definitions.current,
  );
  return {
    actions,
    notices: { subscribe: (fn) => (listeners.add(fn), () => listeners.delete(fn)) },
    close: () => {
      live.close();
      definitions.close();
    },
  };
}

/**
 * The pane's lines for a reload: one for what was added, changed or removed, one per file kept at its last good
 * version.
 */
export function describeDefinitionsChange(c: DefinitionsChange): string[] {
  const parts = [
    ...(c.added.length ? [`added ${c.added.join(', ')}`] : []),
    ...(c.changed.length ? [`changed ${c.changed.join(', ')}`] : []),
    ...(c.removed.length ? [`removed ${c.removed.join(', ')}`] : []),
  ];
  return [
    ...(parts.length ? [`definitions reloaded: ${parts.join('; ')}`] : []),
    ...c.kept.map((e) => `${CHAT_ERROR_PREFIX}${e.message.includes(e.path) ? e.message : `${e.path}: ${e.message}`}`),
  ];
}

/** What every chat action works on: this agent, its home, and the live config and definitions. */
interface ChatContext {
  layout: Layout;
  configNow: () => Config;
  rec: AgentRecord;
  loadedNow: () => LoadResult;
}

function liveChatActions(
  layout: Layout,
  configNow: () => Config,
  rec: AgentRecord,
  loadedNow: () => LoadResult,
): ChatActions {
  const ctx: ChatContext = { layout, configNow, rec, loadedNow };
  return {
    ...unavailableChatActions(),
    ...definitionActions(ctx),
    ...agentActions(ctx),
    ...approvalActions(ctx),
    ...outputActions(ctx),
    ...messageActions(ctx),
    ...taskActions(ctx),
  };
}

/** `@name` and `/agent list`: the definitions as loaded now. */
function definitionActions({ loadedNow }: ChatContext): Pick<ChatActions, 'definitions' | 'list'> {
  return {
    definitions: () => Promise.resolve(loadedNow().definitions.map((d) => d.name)),
    list: () => Promise.resolve(formatDefinitionList(loadedNow())),
  };
}

/** `/agent spawn|status|cancel|resume`: this agent's children, started, shown and ended from the pane. */
function agentActions({
  layout,
  configNow,
  rec,
}: ChatContext): Pick<ChatActions, 'spawn' | 'status' | 'cancel' | 'resume'> {
  return {
    async spawn(name, prompt, opts) {
      const { spawnAgent } = await import('../../spawn/spawn.js');
      const { readRecord } = await import('../../fleet/registry.js');
      const child = await spawnAgent(
        layout,
        configNow(),
        { agent: name, prompt, mode: 'interactive' },
        { parent: readRecord(layout, rec.id) ?? rec, background: opts.background },
      );
      return child.tmux
        ? `started ${child.id} (${child.name}) in window ${child.tmux.windowId}; its result comes back here`
        : `started ${child.id} (${child.name}) in the background; its result comes back here`;
    },
    async status() {
      const [{ listRecords }, { descendants }, { unreadCount }, { formatStatus }] = await Promise.all([
        import('../../fleet/registry.js'),
        import('../../lifecycle/signal.js'),
        import('../../inbox/maildir.js'),
        import('../../fleet/status-view.js'),
      ]);
      const records = listRecords(layout);
      const mine = [rec.id, ...descendants(rec.id, records).map((r) => r.id)];
      return formatStatus(
        records
          .filter((r) => mine.includes(r.id))
          .map((record) => ({ record, unread: unreadCount(layout, record.id) })),
      );
    },
    async cancel(prefix) {
      const [{ resolveAgent }, { cancelAgent }] = await Promise.all([
        import('../../fleet/registry.js'),
        import('../../lifecycle/cancel.js'),
      ]);
      const target = resolveAgent(layout, prefix);
      const { cancelled, notes } = await cancelAgent(layout, configNow(), target, { by: 'human' });
      const said = cancelled.length
        ? `cancelled ${cancelled.join(', ')}`
        : `${target.id} had already ended (${target.status})`;
      return [said, ...notes].join('\n');
    },
    async resume(prefix, prompt) {
      const [{ planResume, resumingLine }, { spawnAgent }, { readRecord }] = await Promise.all([
        import('../../outputs/resume.js'),
        import('../../spawn/spawn.js'),
        import('../../fleet/registry.js'),
      ]);
      const plan = await planResume(layout, configNow(), prefix);
      // Started from this pane, the resumed agent is this agent's child (§6): its result comes back here.
      const child = await spawnAgent(
        layout,
        configNow(),
        {
          agent: plan.definition,
          prompt,
          cwd: plan.cwd,
          mode: 'interactive',
          model: plan.model,
          runtime: plan.runtime,
          resumedFrom: plan.oldId,
        },
        { parent: readRecord(layout, rec.id) ?? rec },
      );
      return resumingLine(plan, child.id);
    },
  };
}

/** `/agent approve|deny`: a person answers a pending request (§11). */
function approvalActions({ layout, configNow }: ChatContext): Pick<ChatActions, 'approve' | 'deny'> {
  const answer = async (id: string, decision: import('../../approvals/answer.js').Decision): Promise<string> => {
    const { answerRequest } = await import('../../approvals/answer.js');
    const done = await answerRequest(layout, configNow(), id, decision, { pid: process.ppid, by: 'chat' });
    return `${decision.decision === 'approve' ? 'approved' : 'denied'} ${done.requestId} (${done.agentId})`;
  };
  return {
    approve: (id) => answer(id, { decision: 'approve', scope: 'once' }),
    deny: (id, reason) => answer(id, { decision: 'deny', reason: reason ?? 'denied by a person' }),
  };
}

/** `/agent output|collect`: finished agents' final answers. */
function outputActions({ layout }: ChatContext): Pick<ChatActions, 'output' | 'collect'> {
  return {
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
  };
}

/** `/send` and `/inbox`: mail, sent as the person typing, read from this agent's inbox. */
function messageActions({ layout, configNow, rec }: ChatContext): Pick<ChatActions, 'send' | 'inbox'> {
  return {
    async send(to, text) {
      const [{ deliver }, { resolveRecipient }] = await Promise.all([
        import('../../inbox/deliver.js'),
        import('../../inbox/address.js'),
      ]);
      // A person typing in this pane sends as 'human'; 'parent' and 'root' are this agent's.
      const recipient = resolveRecipient(layout, to, rec.id);
      const { message } = await deliver(
        layout,
        { from: 'human', to: recipient, kind: 'message', body: text },
        { maxBodyBytes: configNow().inbox.max_body_bytes },
      );
      return `sent ${message.id} to ${recipient}`;
    },
    async inbox() {
      const { list } = await import('../../inbox/read.js');
      const items = await list(layout, rec.id, { includeRead: true });
      if (items.length === 0) return 'no messages';
      return items
        .map((i) => `${i.read ? ' ' : '●'} ${i.message.id}  ${i.message.from}  ${i.message.kind}  ${i.message.summary}`)
        .join('\n');
    },
  };
}

/** `/tasks` and `/task …`: this agent's board (§15). */
function taskActions({ layout, rec }: ChatContext): Pick<ChatActions, 'tasks' | 'task'> {
  return {
    async tasks() {
      const [{ listBoard }, { formatListing }] = await Promise.all([
        import('../../team-store/board.js'),
        import('../../tasks/view.js'),
      ]);
      return formatListing(await listBoard(layout, rec.board ?? 'fleet'));
    },
    task: (action, arg, text) => taskAction(layout, rec.board ?? 'fleet', action, arg, text),
  };
}

/**
 * `/task …` in a pane (§15): the person typing acts, as `human` — like `flotilla task` in a
 * terminal, so they may finish or release any task, not only this agent's claims.
 */
async function taskAction(
  layout: Layout,
  board: string,
  action: TaskChatAction,
  arg: string,
  text: string,
): Promise<string> {
  const [ops, { formatTask }, { FlotillaError }] = await Promise.all([
    import('../../team-store/board.js'),
    import('../../tasks/view.js'),
    import('../../errors.js'),
  ]);
  switch (action) {
    case 'add': {
      const t = await ops.addTask(layout, board, { title: arg }, 'human');
      return `added ${t.id} to board ${t.board}`;
    }
    case 'show': {
      const t = await ops.showTask(layout, board, arg);
      if (!t)
        throw new FlotillaError(`no task '${arg}' on board '${board}' — /tasks shows its tasks`, { code: 'not-found' });
      return formatTask(t);
    }
    case 'release': {
      const t = await ops.releaseTask(layout, board, arg, 'human', text || undefined);
      return `${t.id} released: open again`;
    }
    default: {
      const t = await ops.finishTask(
        layout,
        board,
        arg,
        'human',
        action === 'fail' ? 'failed' : action === 'cancel' ? 'cancelled' : 'done',
        text,
      );
      return `${t.id} ${t.status}`;
    }
  }
}

/** `/agent list`: one line per definition (name, description, model when set), then the files that did not load. */
export function formatDefinitionList(loaded: Pick<LoadResult, 'definitions' | 'errors'>): string {
  const defs = loaded.definitions;
  const width = Math.max(0, ...defs.map((d) => d.name.length));
  const lines = defs.map(
    (d) => `${d.name.padEnd(width)}  ${d.description.replace(/\s+/g, ' ').trim()}${d.model ? `  (${d.model})` : ''}`,
  );
  if (defs.length === 0)
    lines.push('no agent definitions — add one in .flotilla/agents/<name>.md (docs/definitions.md)');
  for (const e of loaded.errors) lines.push(`✗ ${e.message.includes(e.path) ? e.message : `${e.path}: ${e.message}`}`);
  return lines.join('\n');
}
