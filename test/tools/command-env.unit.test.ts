import { describe, expect, it } from 'vitest';
import { busCredentialVars, commandEnvironment } from '../../src/tools/command-env.js';
import { configSchema } from '../../src/config/schema.js';

/**
 * docs/security-fleet.md "Bus credentials belong to harnesses": a tool command never gets the bus's
 * credentials, even when the agent's definition lists them in `permissions.env` (which does
 * pass a provider key); tmux's variables never pass.
 */
describe('commandEnvironment', () => {
  it("drops the bus's credentials whatever permissions.env allows, and TMUX always", () => {
    const bus = busCredentialVars(configSchema.parse({}));
    expect(bus).toEqual(
      expect.arrayContaining(['FLOTILLA_NATS_TOKEN', 'FLOTILLA_NATS_USER', 'FLOTILLA_NATS_PASSWORD']),
    );
    const env = {
      PATH: '/bin',
      FLOTILLA_NATS_TOKEN: 't',
      FLOTILLA_NATS_USER: 'u',
      FLOTILLA_NATS_PASSWORD: 'p',
      ANTHROPIC_API_KEY: 'k',
      TMUX: '/s,1,0',
      TMUX_PANE: '%1',
    };
    const allow = ['FLOTILLA_NATS_TOKEN', 'FLOTILLA_NATS_USER', 'FLOTILLA_NATS_PASSWORD', 'ANTHROPIC_API_KEY'];
    const out = commandEnvironment(env, { keys: ['ANTHROPIC_API_KEY'], allow, never: bus });
    expect(out).toEqual({ PATH: '/bin', ANTHROPIC_API_KEY: 'k' });
  });
});
