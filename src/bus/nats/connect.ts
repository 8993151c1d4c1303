import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Config } from '../../config/schema.js';
import { FlotillaError, errorMessage } from '../../errors.js';
import { extraCaCertsAside } from '../../extra-ca-certs.js';

/**
 * Connects to the fleet's NATS server (§18). Credentials and TLS come from the environment
 * (the variables `fleet.nats` names) and the config, never from a file in the fleet root.
 * The client reconnects for ever: a bus that goes away comes back, and until then mail waits
 * in the outbox. This folder is loaded only for a `nats://` bus (bus/open.ts), so a `maildir`
 * fleet never pays for the client library.
 */
export async function connectNats(
  url: string,
  settings: Config['fleet']['nats'],
  env: NodeJS.ProcessEnv = process.env,
): Promise<NatsConnection> {
  const tls = url.startsWith('tls://');
  const server = url.replace(/^(nats|tls):\/\//, '');
  const token = env[settings.token_env];
  const user = env[settings.user_env];
  const pass = env[settings.password_env];
  try {
    return await connect({
      servers: server,
      name: `flotilla-${process.pid}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      // A dead server should queue mail at once, not after the default 20 s.
      timeout: 2_000,
      // No async stack kept per request (an Error made for each, ~100 of them a `status`): our messages never show it.
      noAsyncTraces: true,
      ...(token ? { token } : {}),
      ...(user ? { user, pass: pass ?? '' } : {}),
      ...(tls ? { tls: tlsOptions(settings) } : {}),
    });
  } catch (err) {
    throw new FlotillaError(
      `cannot reach the bus ${url}: ${errorMessage(err)} — start it (nats-server -js) or check fleet.bus`,
      { code: 'bus-unreachable', cause: err },
    );
  }
}

/**
 * The CA that signed the bus's certificate: `ca_file`'s alone, or the default ones and those this process started
 * without (src/extra-ca-certs.ts), or Node's own (its defaults and NODE_EXTRA_CA_CERTS).
 */
function tlsOptions(settings: Config['fleet']['nats']): { caFile?: string; ca?: string } {
  if (settings.ca_file) return { caFile: settings.ca_file };
  const aside = extraCaCertsAside();
  // node:tls only here: a plain connection never loads it.
  return aside ? { ca: [...process.getBuiltinModule('node:tls').rootCertificates, aside].join('\n') } : {};
}
