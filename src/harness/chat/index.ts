/** Chat commands typed in an agent's pane (§6). */
export { parseChat, CHAT_USAGE, type ChatCommand, type ChatParse } from './parse.js';
export { runChat, CHAT_HELP, CHAT_ERROR_PREFIX } from './run.js';
export { notYetAvailable, unavailableChatActions, type ChatActions } from './actions.js';
