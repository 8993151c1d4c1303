import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { requireTool } from '../helpers/requires.js';

/**
 * A vendor's own HTTPS hosts (its token service, its account service), stood in for on
 * 127.0.0.1 for the login tests: the CLI reaches them as a person behind a company proxy
 * would — `HTTPS_PROXY` names this proxy, which answers CONNECT for the given domains itself
 * with a certificate from a throwaway authority (made here with openssl, in the test's temp
 * folder) that the CLI is told to trust (`NODE_EXTRA_CA_CERTS`, `CODEX_CA_CERTIFICATE`). Any
 * other host is refused. `handle` answers each request; `host` is the name the CLI asked for.
 */
export interface TlsStandIn {
  /** `http://127.0.0.1:<port>`, for HTTPS_PROXY. */
  proxyUrl: string;
  /** The throwaway authority's certificate (PEM), for the CLI to trust. */
  caFile: string;
  close(): Promise<void>;
}

export type StandInHandler = (
  req: IncomingMessage & { host: string; body: string },
  res: ServerResponse,
) => Promise<void> | void;

function makeCertificates(dir: string, domains: readonly string[]): { caFile: string; key: Buffer; cert: Buffer } {
  const f = (n: string) => join(dir, n);
  const bin = requireTool('openssl');
  const openssl = (...args: string[]) => execFileSync(bin, args, { stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=flotilla test authority',
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('leaf.key'),
    '-out',
    f('leaf.csr'),
    '-subj',
    `/CN=${domains[0]}`,
  );
  writeFileSync(f('leaf.ext'), `subjectAltName=${domains.flatMap((d) => [`DNS:*.${d}`, `DNS:${d}`]).join(',')}\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    f('leaf.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('leaf.pem'),
    '-days',
    '2',
    '-extfile',
    f('leaf.ext'),
  );
  return { caFile: f('ca.pem'), key: readFileSync(f('leaf.key')), cert: readFileSync(f('leaf.pem')) };
}

export const sendJson = (res: ServerResponse, body: unknown, status = 200): void => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** Stands in for every host under `domains` (and the domains themselves) over TLS; `dir` holds the certificates. */
export async function startTlsStandIn(
  dir: string,
  domains: readonly string[],
  handle: StandInHandler,
): Promise<TlsStandIn> {
  const { caFile, key, cert } = makeCertificates(dir, domains);
  const tls = createHttpsServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const full = Object.assign(req, {
        host: String(req.headers.host ?? '').replace(/:443$/, ''),
        body: Buffer.concat(chunks).toString('utf8'),
      });
      void Promise.resolve(handle(full, res)).catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, { error: { code: 500, message: String(err) } }, 500);
        else res.end();
      });
    });
  });
  const proxy = createHttpServer((_req, res) => sendJson(res, { error: 'this proxy only answers CONNECT' }, 405));
  const sockets = new Set<Socket>();
  const served = (target: string) => domains.some((d) => target === `${d}:443` || target.endsWith(`.${d}:443`));
  proxy.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    if (!served(req.url ?? '')) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) socket.unshift(head);
    tls.emit('connection', socket);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    proxyUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    caFile,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        tls.close();
        proxy.closeAllConnections();
        proxy.close(() => r());
      }),
  };
}
