/**
 * Refusing a request body that is too large, for every HTTP route of `vlt serve` (the MCP
 * endpoint and the browser chat).
 */
import type * as http from 'node:http';

/** How long a refused body may keep arriving before the connection is closed. */
export const BODY_LINGER_MS = 2_000;

/**
 * Answers 413 with `body` (JSON) to a request whose body is still arriving. The answer is
 * written at once, but the response is only ended (which closes the connection) once the client
 * stops sending, or after {@link BODY_LINGER_MS}: closing under a client that is still writing
 * resets the connection, and the client sees a broken pipe instead of the answer. Meanwhile the
 * rest of the body is read and dropped, never kept.
 */
export function refuseOversizedBody(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
  res.writeHead(413, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store', Connection: 'close' });
  res.write(body);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(linger);
    res.end();
  };
  const linger = setTimeout(end, BODY_LINGER_MS);
  req.removeAllListeners('data');
  req.once('end', end).once('close', end).resume();
}
