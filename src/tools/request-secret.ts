import { z } from 'zod';
import type { Tool } from './types.js';
import type { ToolSpec } from './spec.js';

/**
 * request_secret {key, reason?} (§11): asks a person for one of the secret keys the agent's
 * definition lists. The call waits for the answer; a grant puts the value into the
 * environment of the agent's later shell commands, never into the model's text.
 */

export type SecretRequestOutcome =
  | { granted: true; key: string; varName: string; expiresAt: string; ttlSecs: number; already?: boolean }
  | { granted: false; key: string; reason: string };

export interface SecretRequestOperations {
  /** Asks (or refuses at once); resolves when a person answered, nobody did in time, or the turn stopped. */
  request(key: string, reason: string | undefined, signal: AbortSignal): Promise<SecretRequestOutcome>;
  /** The keys this agent may request, for the description. */
  keys: readonly string[];
}

const input = z.strictObject({
  key: z.string().min(1).max(64).describe("The secret key, one of the keys listed in this tool's description"),
  reason: z.string().max(500).optional().describe('One line for the person: why you need it now'),
});
export type RequestSecretInput = z.infer<typeof input>;

export function createRequestSecretTool(ops: SecretRequestOperations): Tool<RequestSecretInput> {
  const first = ops.keys[0] ?? 'github-token';
  return {
    name: 'request_secret',
    klass: 'fleet',
    description:
      `Ask a person for a secret you need for a command. Keys you may request: ${ops.keys.join(', ')}. ` +
      'The call waits until a person answers. If granted, the value is in an environment variable of your shell commands ' +
      'for a limited time (the result names the variable and the expiry); you never see the value itself — output ' +
      'containing it reads [secret:<key>]. Use the variable in commands; do not try to print or store the value. ' +
      `Example: {"key": "${first}", "reason": "push the release tag"}.`,
    inputSchema: input,
    inputExample: { key: first, reason: 'push the release tag' },
    async execute({ key, reason }, ctx) {
      const o = await ops.request(key, reason, ctx.signal);
      if (!o.granted) {
        return { output: `Secret '${key}' was not granted: ${o.reason}`, isError: true, meta: { key, granted: false } };
      }
      const lead = o.already ? `Secret '${o.key}' is already granted` : `Secret '${o.key}' granted`;
      return {
        output:
          `${lead}: your shell commands get it as $${o.varName} until ${o.expiresAt} (${o.ttlSecs} s from the grant). ` +
          `Use it inside a command, e.g. {"command": "curl -H \\"Authorization: Bearer $${o.varName}\\" …"}. ` +
          `Output that contains the value shows [secret:${o.key}] instead.`,
        meta: { key, granted: true },
      };
    },
  };
}

export const requestSecretTool: ToolSpec = {
  name: 'request_secret',
  create: ({ secrets }) => secrets && (createRequestSecretTool(secrets) as Tool),
};
