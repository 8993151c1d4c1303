import type { Log } from '../audit/logger.js';
import type { Config } from '../config/schema.js';
import type { Definition } from '../definitions/types.js';
import type { AgentRecord } from '../fleet/record.js';
import { updateRecord } from '../fleet/registry.js';
import type { Layout } from '../layout/layout.js';
import { Approvals } from '../approvals/ask.js';
import { ancestorLacking, SecretBroker } from './secret-broker.js';
import type { SessionEvent } from './session-types.js';

/**
 * Who a starting agent asks (§7, §11): the approvals its gate raises, and the broker that asks
 * for its secrets when its policy names any. Both show their questions through `emit` and
 * mark the record `waiting_approval` while a person is asked.
 */
export async function openApprovals(opts: {
  layout: Layout;
  config: Config;
  rec: AgentRecord;
  definition: Definition;
  env: NodeJS.ProcessEnv;
  log: Log;
  emit: (e: SessionEvent) => void;
}): Promise<{ approvals: Approvals; secrets: SecretBroker | undefined }> {
  const { layout, config, rec, definition, env, log, emit } = opts;
  const setWaiting = (waiting: boolean) => {
    try {
      updateRecord(layout, rec.id, { status: waiting ? 'waiting_approval' : 'working' });
    } catch {
      /* ended meanwhile */
    }
  };
  const approvals = new Approvals(layout, rec.id, config.agents.approval_timeout_secs, emit, setWaiting);
  const secrets =
    rec.effectivePolicy.secrets.length > 0
      ? new SecretBroker({
          layout,
          config,
          agentId: rec.id,
          keys: rec.effectivePolicy.secrets,
          ttlSecs: definition.ttlSecs,
          env,
          log,
          emit,
          noApprover: rec.background
            ? 'this is a background agent'
            : rec.mode === 'headless'
              ? 'this agent runs headless'
              : null,
          ancestorLacking: (key) => ancestorLacking(layout, rec, key),
          setWaiting,
          onGrants: (grants) => {
            updateRecord(layout, rec.id, { secretGrants: grants });
          },
          sandboxed: await commandsSandboxed(config, env),
        })
      : undefined;
  return { approvals, secrets };
}

/** Whether this agent's shell commands run in the OS sandbox (then siblings cannot read a granted value from them). */
async function commandsSandboxed(config: Config, env: NodeJS.ProcessEnv): Promise<boolean> {
  if (config.security.sandbox === 'none') return false;
  const { effectiveSandbox } = await import('../tools/sandbox-mode.js');
  try {
    return effectiveSandbox(config, env).kind === 'bubblewrap';
  } catch {
    return false;
  }
}
