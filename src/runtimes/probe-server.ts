import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the three vendor model APIs on 127.0.0.1, for `flotilla doctor --runtimes`:
 * it notes which credential reached a model endpoint (Anthropic Messages, OpenAI Responses,
 * Gemini generateContent) and answers the CLI's other calls as the tests' fake server does
 * (test/runtimes/wire-*.ts). A model call is refused as overloaded: reaching it is the proof.
 */
export interface ProbeServer {
  url: string;
  /** The credentials (API keys) that reached a model endpoint. */
  reached: Set<string>;
  close(): Promise<void>;
}

const MODEL_CALL = /^\/v1\/messages(\?|$)|\/responses(\?|$)|:(stream)?[gG]enerateContent(\?|$)/;

export async function startProbeServer(): Promise<ProbeServer> {
  const reached = new Set<string>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const url = req.url ?? '/';
      if (req.method === 'POST' && MODEL_CALL.test(url)) {
        const key = credential(req);
        if (key) reached.add(key);
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              type: 'overloaded_error',
              code: 503,
              message: 'flotilla doctor --runtimes: the model was reached',
              status: 'UNAVAILABLE',
            },
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(otherReply(url));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reached,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function credential(req: IncomingMessage): string | undefined {
  const h = req.headers;
  const bearer = /^Bearer\s+(.+)$/i.exec(String(h.authorization ?? ''))?.[1];
  const key =
    h['x-api-key'] ??
    h['x-goog-api-key'] ??
    bearer ??
    new URL(req.url ?? '/', 'http://x').searchParams.get('key') ??
    undefined;
  return typeof key === 'string' && key ? key : undefined;
}

function otherReply(url: string): string {
  if (url.includes('count_tokens')) return '{"input_tokens":100}';
  if (url.includes('countTokens')) return '{"totalTokens":100}';
  if (url.includes('/models')) return '{"object":"list","data":[],"models":[]}';
  return '{}';
}
