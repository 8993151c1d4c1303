import type { Config } from '../config/schema.js';
import type { AgentRecord } from '../fleet/record.js';
import type { Layout } from '../layout/layout.js';
import { unavailableChatActions, type ChatActions } from './chat/actions.js';

/** What the pane's chat commands do for this agent (§6): the CLI's operations, with this agent as parent. */
export async function chatActionsFor(layout: Layout, config: Config, _rec: AgentRecord): Promise<ChatActions> {
  const { loadDefinitions } = await import('../definitions/load.js');
  const names = (await loadDefinitions({ layout, config })).definitions.map((d) => d.name);
  return { ...unavailableChatActions(names), definitions: () => Promise.resolve(names) };
}
