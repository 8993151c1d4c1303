import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { Definition } from '../definitions/types.js';
import type { AgentRecord } from '../fleet/record.js';
import type { HookContext } from '../hooks/run-hooks.js';
import type { Layout } from '../layout/layout.js';
import type { ShellClassifier } from '../policy/shell/classify.js';
import type { Approvals } from '../approvals/ask.js';
import type { Tool } from '../tools/types.js';
import { buildTools } from './build-tools.js';
import { createGate } from './gate.js';
import type { HarnessInboxPort } from './inbox-port.js';
import { agentReadScope, readScopeCheck } from './read-scope.js';
import type { SecretBroker } from './secret-broker.js';
import type { SessionEvent } from './session-types.js';
import { openApprovals } from './start-approvals.js';

/**
 * What a starting agent may do: its tools, who it asks (approvals, the secret broker), and
 * the gate every call passes.
 */
export async function equipAgent(opts: {
  layout: Layout;
  config: Config;
  rec: AgentRecord;
  definition: Definition;
  inbox: HarnessInboxPort;
  hookContext: HookContext;
  log: Log;
  /** The harness's own environment: where a secret's `env` source is read. */
  env: NodeJS.ProcessEnv;
  /** The tools' environment (harness/start-steps.ts toolEnvironment). */
  childEnv: NodeJS.ProcessEnv;
  memoryDir: string | undefined;
  /** Shows the approvals' and the broker's questions in the session. */
  emit: (e: SessionEvent) => void;
}): Promise<{
  approvals: Approvals;
  secrets: SecretBroker | undefined;
  tools: Tool[];
  gate: ReturnType<typeof createGate>;
}> {
  const { layout, config, rec, definition, env, log, emit } = opts;
  const { approvals, secrets } = await openApprovals({ layout, config, rec, definition, env, log, emit });
  const tools = await buildTools({
    layout,
    config,
    record: rec,
    env: opts.childEnv,
    memoryDir: opts.memoryDir,
    inbox: opts.inbox,
    log,
    passEnv: definition.passEnv ?? [],
    ...(secrets ? { secrets } : {}),
  });
  const gate = await agentGate({ ...opts, approvals });
  return { approvals, secrets, tools, gate };
}

/**
 * The gate every tool call of a starting agent passes (§7, §9; harness/gate.ts), given this
 * agent's policy, its withheld tools, its shell gate and where it may read.
 */
async function agentGate(opts: {
  layout: Layout;
  config: Config;
  rec: AgentRecord;
  definition: Definition;
  approvals: Approvals;
  hookContext: HookContext;
  log: Log;
  /** The tools' environment (harness/start-steps.ts toolEnvironment). */
  childEnv: NodeJS.ProcessEnv;
  memoryDir: string | undefined;
}): Promise<ReturnType<typeof createGate>> {
  const { layout, config, rec, definition, childEnv } = opts;
  const { withheldRules } = await import('../policy/tool-policy.js');
  const policy = {
    tools: rec.effectivePolicy.tools,
    withheld: withheldRules(definition.tools, config.agents.default_disallowed_tools, rec.effectivePolicy.tools),
  };
  // The bash grammar loads on the first shell command, never at start-up (§14).
  let classifier: Promise<ShellClassifier> | undefined;
  const shellClassifier = () =>
    (classifier ??= import('./shell-parser.js').then((m) =>
      m.loadShellClassifier(config.security.deny_commands, childEnv),
    ));
  return createGate({
    layout,
    record: rec,
    policy,
    definition,
    approvals: opts.approvals,
    canAsk: !rec.background && rec.mode !== 'headless',
    hookContext: opts.hookContext,
    log: opts.log,
    shellClassifier,
    opaqueCommands: config.security.opaque_commands,
    readScope: readScopeCheck(
      agentReadScope({
        layout,
        cwd: rec.cwd,
        memoryDir: opts.memoryDir,
        readDirs: config.permissions.read_dirs,
        env: childEnv,
        hiddenPaths: config.security.hidden_paths,
      }),
      rec.permissionMode,
      rec.cwd,
      childEnv.HOME,
    ),
  });
}
