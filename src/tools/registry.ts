import type { ToolSpec } from './spec.js';
import { shellTool } from './shell.js';
import { readTool } from './read.js';
import { writeTool } from './write.js';
import { editTool } from './edit.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { sendMessageTool } from './send-message.js';
import { checkInboxTool } from './check-inbox.js';
import { spawnAgentTool } from './spawn-agent.js';
import { listAgentsTool } from './list-agents.js';
import { waitForAgentsTool } from './wait-for-agents.js';
import { cancelAgentTool } from './cancel-agent.js';
import { mergeWorkTool } from './merge-work.js';
import { leasePathsTool } from './lease-paths.js';
import { taskCreateTool } from './task-create.js';
import { taskListTool } from './task-list.js';
import { taskClaimTool } from './task-claim.js';
import { taskUpdateTool } from './task-update.js';
import { waitForTasksTool } from './wait-for-tasks.js';
import { requestSecretTool } from './request-secret.js';

/**
 * Every tool of our harness (CONTRIBUTING.md, "A tool"): the harness (harness/build-tools.ts),
 * `flotilla mcp` (mcp/tools.ts), the pane and the system prompt read this list, and nothing
 * else names a tool's module. In the tool table's order (policy/tool-table.ts), which is the
 * order the model sees them in.
 */
export const TOOLS: readonly ToolSpec[] = [
  shellTool,
  readTool,
  writeTool,
  editTool,
  globTool,
  grepTool,
  sendMessageTool,
  checkInboxTool,
  spawnAgentTool,
  listAgentsTool,
  waitForAgentsTool,
  cancelAgentTool,
  mergeWorkTool,
  leasePathsTool,
  taskCreateTool,
  taskListTool,
  taskClaimTool,
  taskUpdateTool,
  waitForTasksTool,
  requestSecretTool,
];
