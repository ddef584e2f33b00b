/**
 * The MCP Streamable HTTP transport on Node's `http` module: one `McpServer` and one SDK
 * `StreamableHTTPServerTransport` per session, all over the same tool context (the caller's
 * `newSession`).
 *
 * The server holds the code of a workspace, and a browser page the user happens to visit can
 * send requests to 127.0.0.1, so every request passes these checks before the SDK sees it, in
 * this order:
 *   1. `Host` names the bound address (or localhost) and port, else 403: a DNS-rebinding page
 *      reaches us under its own host name;
 *   2. `Origin`, when sent, is this server's own origin, else 403: a cross-site page;
 *   3. `Authorization: Bearer <token>`, compared in constant time, else 401;
 *   4. the body is read with a running byte count and refused past the limit (413) without
 *      buffering the rest; unparseable JSON is a JSON-RPC parse error (400).
 * Only then does a request reach its session (404 for an unknown or expired one, per the spec).
 * `GET /health` answers `{"ok":true}` after checks 1-2 and without the token, and says nothing
 * about the workspace.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import * as os from 'node:os';
import { VltError } from '../core/errors';
import type { Logger } from '../core/ports';
import { refuseOversizedBody } from '../server/http-body';

export const DEFAULT_MCP_HOST = '127.0.0.1';
/** Fixed, so that a client configured once finds the server again after a restart (the CLI help names it). */
export const DEFAULT_MCP_PORT = 7457;
export const MCP_PATH = '/mcp';
export const HEALTH_PATH = '/health';

export interface McpHttpLimits {
  /** Largest request body accepted, in bytes; a larger one is answered 413. */
  maxBodyBytes: number;
  /** A session with no request for this long is closed; its client gets 404 and starts a new one. */
  sessionIdleMs: number;
  /** Most sessions held at once; past it the least recently used idle session is closed. */
  maxSessions: number;
}

export const DEFAULT_LIMITS: McpHttpLimits = {
  maxBodyBytes: 4 * 1024 * 1024,
  sessionIdleMs: 30 * 60_000,
  maxSessions: 64,
};

export interface McpHttpServerOptions {
  /** A literal address, as {@link resolveBindHost} returns it. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  token: string;
  /** The address may be non-loopback: Host and Origin may then also name this machine's addresses. */
  allowRemote: boolean;
  /** A fresh MCP server for a new session. */
  newSession: () => McpServer;
  logger: Logger;
  limits?: Partial<McpHttpLimits>;
  /**
   * Other routes on the same server (the browser chat), asked after the Host and Origin checks
   * and before the bearer token's: they authenticate themselves. True when one answered.
   */
  routes?: (req: http.IncomingMessage, res: http.ServerResponse, pathname: string) => Promise<boolean>;
}

export interface McpHttpServer {
  /** The MCP endpoint: http://HOST:PORT/mcp. */
  url: string;
  host: string;
  port: number;
  /** Number of open sessions. */
  sessionCount(): number;
  /** Stops listening, closes every session and connection. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------
// Binding
// ---------------------------------------------------------------------------------------

function isLoopback(address: string): boolean {
  if (isIP(address) === 4) return address.startsWith('127.');
  const a = address.toLowerCase();
  return a === '::1' || a.startsWith('::ffff:127.');
}

/**
 * The literal address to listen on for `--host`: `localhost` means 127.0.0.1 (not whatever the
 * resolver says today), brackets around IPv6 are dropped. A non-loopback address or any other
 * host name is refused (`USAGE`) unless `allowRemote`.
 */
export function resolveBindHost(host: string, allowRemote: boolean): string {
  let h = host.trim();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.toLowerCase() === 'localhost') h = DEFAULT_MCP_HOST;
  if (!h) throw new VltError('USAGE', '--host is empty');
  if (isIP(h) === 0 && !allowRemote) {
    throw new VltError('USAGE', `--host ${host}: give a loopback address (127.0.0.1 or ::1); a host name may resolve to an address other machines can reach`);
  }
  if (!isLoopback(h) && !allowRemote) {
    throw new VltError(
      'USAGE',
      `refusing to listen on ${host}: it is not a loopback address, so other machines could reach the server and read the indexed code. Use the default --host 127.0.0.1, or add --allow-remote if that is what you want.`,
    );
  }
  return h;
}

/** An address as it appears in a URL or a Host header: IPv6 in brackets. */
function urlHost(address: string): string {
  return isIP(address) === 6 ? `[${address}]` : address;
}

/** The `Host` header values (host:port, lower case) a request may carry. */
function allowedHosts(bound: string, port: number, allowRemote: boolean): Set<string> {
  const names = new Set([urlHost(bound), 'localhost']);
  if (allowRemote) {
    // Remote clients name the machine by one of its addresses or its host name; DNS rebinding
    // is still refused for any other name.
    names.add('127.0.0.1').add('[::1]').add(os.hostname());
    for (const list of Object.values(os.networkInterfaces())) for (const i of list ?? []) names.add(urlHost(i.address));
  }
  return new Set([...names].map((n) => `${n.toLowerCase()}:${port}`));
}

// ---------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------

/** JSON-RPC error codes used at the HTTP layer, as the SDK uses them. */
const PARSE_ERROR = -32700;
const SERVER_ERROR = -32000;
const SESSION_NOT_FOUND = -32001;

function sendError(res: http.ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * A request's path for a log line, without its query string: a query may carry a secret (the
 * browser chat's one-time login code) and logs are kept and shared.
 */
export function pathOnly(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.search(/[?#]/);
  return quote(q < 0 ? raw : `${raw.slice(0, q)}?…`).slice(1, -1);
}

/**
 * Whether an `Authorization` header carries the bearer token. Both sides are hashed to one
 * length, so that timingSafeEqual neither throws on a length mismatch nor leaks the token's
 * length through timing.
 */
export function bearerMatches(header: string | undefined, token: string, tokenDigest: Buffer = createHash('sha256').update(token).digest()): boolean {
  const m = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header ?? '');
  if (!m?.[1]) return false;
  return timingSafeEqual(createHash('sha256').update(m[1]).digest(), tokenDigest);
}

/** An untrusted header value for a log line or a message: short, and with control characters escaped. */
function quote(value: string): string {
  return JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value);
}

/** Answers 413, as a JSON-RPC error, to a request whose body is still arriving (http-body.ts). */
function refuseBody(req: http.IncomingMessage, res: http.ServerResponse, message: string): void {
  refuseOversizedBody(req, res, JSON.stringify({ jsonrpc: '2.0', error: { code: SERVER_ERROR, message }, id: null }));
}

/** One warning line per kind of rejection per interval, so that a flood of bad requests cannot flood stderr. */
function rateLimitedWarn(logger: Logger, intervalMs = 10_000): (kind: string, msg: string) => void {
  const last = new Map<string, { at: number; suppressed: number }>();
  return (kind, msg) => {
    const now = Date.now();
    const l = last.get(kind);
    if (l && now - l.at < intervalMs) {
      l.suppressed++;
      return;
    }
    logger.warn(`mcp: ${msg}${l?.suppressed ? ` (${l.suppressed} more like it not shown)` : ''}`);
    last.set(kind, { at: now, suppressed: 0 });
  };
}

// ---------------------------------------------------------------------------------------
// Body
// ---------------------------------------------------------------------------------------

type Body = { kind: 'ok'; text: string } | { kind: 'too-large' } | { kind: 'aborted' };

/**
 * Reads a request body up to `limit` bytes. A declared or running length past the limit stops
 * the reading at once: the rest is never buffered.
 */
function readBody(req: http.IncomingMessage, limit: number): Promise<Body> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ kind: 'too-large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (b: Body) => {
      req.off('data', onData).off('end', onEnd).off('error', onAbort).off('aborted', onAbort);
      resolve(b);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        finish({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish({ kind: 'ok', text: Buffer.concat(chunks, size).toString('utf8') });
    const onAbort = () => finish({ kind: 'aborted' });
    req.on('data', onData).on('end', onEnd).on('error', onAbort).on('aborted', onAbort);
  });
}

// ---------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------

interface Session {
  id: string;
  server: McpServer;
  transport: StreamableHTTPServerTransport;
  lastSeen: number;
  /** HTTP requests of this session still open (an SSE stream counts): such a session is not idle. */
  inFlight: number;
}

/** Starts listening; resolves once the port is bound. Listen failures are VltErrors. */
export async function startMcpHttpServer(opts: McpHttpServerOptions): Promise<McpHttpServer> {
  const endpoint = new McpHttpEndpoint(opts);
  const port = await endpoint.listen();
  return {
    url: `http://${urlHost(opts.host)}:${port}${MCP_PATH}`,
    host: opts.host,
    port,
    sessionCount: () => endpoint.sessionCount,
    close: () => endpoint.close(),
  };
}

/**
 * The endpoint: every request passes the checks in order (Host, Origin, the health path, the
 * host's own routes, the token, the path, the session, the method, the body) before a session's
 * transport sees it; sessions are created on initialize, capped, and swept when idle.
 */
class McpHttpEndpoint {
  private readonly limits: McpHttpLimits;
  private readonly warn: (kind: string, msg: string) => void;
  private readonly sessions = new Map<string, Session>();
  private readonly tokenDigest: Buffer;
  private readonly server: http.Server;
  private hosts = new Set<string>();
  private origins = new Set<string>();
  private closing = false;
  private sweep: NodeJS.Timeout | undefined;

  constructor(private readonly opts: McpHttpServerOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.warn = rateLimitedWarn(opts.logger);
    this.tokenDigest = createHash('sha256').update(opts.token).digest();
    const { logger } = opts;
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        logger.error(`mcp: ${req.method} ${pathOnly(req.url)} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
        sendError(res, 500, SERVER_ERROR, 'Internal error');
      });
    });
    // A client that opens connections and sends nothing, or trickles a body, is cut off; a
    // long-running tool call is not affected (these bound receiving the request only).
    this.server.headersTimeout = 20_000;
    this.server.requestTimeout = 60_000;
    this.server.maxHeadersCount = 100;
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
      logger.debug(`mcp: client error: ${err.code ?? err.message}`);
      if (socket.writable && !socket.destroyed) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Binds the port (a failure is a VltError saying what to do), then accepts only its own names as Host and Origin. */
  async listen(): Promise<number> {
    const { opts, server } = this;
    await new Promise<void>((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException) => {
        const where = `${urlHost(opts.host)}:${opts.port}`;
        if (e.code === 'EADDRINUSE') reject(new VltError('USAGE', `${where} is in use (another \`vlt serve\`? \`vlt mcp info\` tells); choose another port with --mcp-port, or 0 for any free one`));
        else if (e.code === 'EACCES') reject(new VltError('USAGE', `not allowed to listen on ${where}; choose a port above 1023 with --mcp-port`));
        else if (e.code === 'EADDRNOTAVAIL') reject(new VltError('USAGE', `${opts.host} is not an address of this machine`));
        else reject(new VltError('IO', `could not listen on ${where}: ${e.message}`, undefined, { cause: e }));
      };
      server.once('error', onError);
      server.listen({ host: opts.host, port: opts.port, exclusive: true }, () => {
        server.off('error', onError);
        resolve();
      });
    });
    server.on('error', (e) => opts.logger.error(`mcp: HTTP server error: ${e.message}`));
    const port = (server.address() as AddressInfo).port;
    this.hosts = allowedHosts(opts.host, port, opts.allowRemote);
    this.origins = new Set([...this.hosts].map((h) => `http://${h}`).concat([`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`]));
    const idleMs = this.limits.sessionIdleMs;
    this.sweep = setInterval(
      () => {
        const cutoff = Date.now() - idleMs;
        for (const s of [...this.sessions.values()]) if (s.inFlight === 0 && s.lastSeen < cutoff) void this.closeSession(s, 'idle');
      },
      Math.max(1000, Math.min(60_000, idleMs / 4)),
    );
    this.sweep.unref();
    return port;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.sweep);
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.all([...this.sessions.values()].map((s) => this.closeSession(s, 'server stopping')));
    // Open SSE streams and idle keep-alive connections would hold close() forever.
    this.server.closeAllConnections();
    await stopped;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const t0 = performance.now();
    res.once('finish', () => this.opts.logger.debug(`mcp: ${req.method} ${pathOnly(req.url)} ${res.statusCode} in ${(performance.now() - t0).toFixed(1)} ms`));
    if (this.closing) return sendError(res, 503, SERVER_ERROR, 'the server is shutting down', { Connection: 'close' });
    const pathname = this.admit(req, res);
    if (pathname === undefined) return;
    if (pathname === HEALTH_PATH && req.method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      res.end('{"ok":true}');
      return;
    }
    if (this.opts.routes && (await this.opts.routes(req, res, pathname))) return;
    // 3. The token.
    if (!bearerMatches(req.headers.authorization, this.opts.token, this.tokenDigest)) {
      this.warn('auth', `refused a request ${req.headers.authorization ? 'with a wrong' : 'without a'} bearer token (see \`vlt mcp info\`)`);
      return sendError(res, 401, SERVER_ERROR, 'Unauthorized: send "Authorization: Bearer <token>"; `vlt mcp info` prints the token', { 'WWW-Authenticate': 'Bearer realm="vlt-oracle"' });
    }
    if (pathname !== MCP_PATH) return sendError(res, 404, SERVER_ERROR, `Not Found: the MCP endpoint is ${MCP_PATH}`);
    return this.mcpRequest(req, res);
  }

  /**
   * 1-2. DNS rebinding and cross-site requests: only this server's own names as Host, only its
   * own pages as Origin. The request's path, or undefined once it has been answered.
   */
  private admit(req: http.IncomingMessage, res: http.ServerResponse): string | undefined {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!this.hosts.has(host)) {
      this.warn('host', `refused a request with Host ${quote(host)} (expected one of ${[...this.hosts].join(', ')}): possibly DNS rebinding`);
      sendError(res, 403, SERVER_ERROR, `Forbidden: Host header ${quote(host)} is not this server`);
      return undefined;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !this.origins.has(origin.toLowerCase())) {
      this.warn('origin', `refused a request from Origin ${quote(origin)}`);
      sendError(res, 403, SERVER_ERROR, `Forbidden: Origin ${quote(origin)} may not use this server`);
      return undefined;
    }
    try {
      return new URL(req.url ?? '/', 'http://localhost').pathname;
    } catch {
      sendError(res, 400, SERVER_ERROR, 'Bad Request: malformed URL');
      return undefined;
    }
  }

  /** A request to the MCP path with a valid token: to its session, or a new session for an initialize. */
  private async mcpRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    const existing = sessionId !== undefined ? this.sessions.get(sessionId) : undefined;
    if (sessionId !== undefined && !existing) return sendError(res, 404, SESSION_NOT_FOUND, 'Session not found: it ended or expired; start a new one with initialize');
    switch (req.method) {
      case 'POST':
        break;
      case 'GET':
      case 'DELETE':
        if (!existing) return sendError(res, 400, SERVER_ERROR, 'Bad Request: Mcp-Session-Id header is required');
        return this.dispatch(existing, req, res);
      default:
        return sendError(res, 405, SERVER_ERROR, 'Method Not Allowed', { Allow: 'GET, POST, DELETE' });
    }
    // 4. The body.
    const limit = this.limits.maxBodyBytes;
    const body = await readBody(req, limit);
    if (body.kind === 'aborted') return;
    if (body.kind === 'too-large') {
      this.warn('size', `refused a request body over ${limit} bytes`);
      return refuseBody(req, res, `Payload Too Large: a request body may hold at most ${limit} bytes`);
    }
    let message: unknown;
    try {
      message = JSON.parse(body.text);
    } catch (e) {
      return sendError(res, 400, PARSE_ERROR, `Parse error: ${(e as Error).message.slice(0, 200)}`);
    }
    if (existing) return this.dispatch(existing, req, res, message);
    const initializing = Array.isArray(message) ? message.some((m) => isInitializeRequest(m)) : isInitializeRequest(message);
    if (!initializing) return sendError(res, 400, SERVER_ERROR, 'Bad Request: Mcp-Session-Id header is required (or send initialize to start a session)');
    const session = await this.newSession();
    if (!session) return sendError(res, 503, SERVER_ERROR, `Service Unavailable: all ${this.limits.maxSessions} sessions are busy; try again shortly`, { 'Retry-After': '5' });
    await this.dispatch(session, req, res, message);
    // The transport refused the initialize (a wrong Accept header, say): nothing refers to
    // this server any more, and it holds nothing worth keeping.
    if (!session.id) await session.server.close().catch(() => undefined);
  }

  private async closeSession(s: Session, why: string): Promise<void> {
    const { logger } = this.opts;
    this.sessions.delete(s.id);
    logger.debug(`mcp: session ${s.id} closed (${why})`);
    await s.server.close().catch((e: unknown) => logger.warn(`mcp: closing session ${s.id} failed: ${String(e)}`));
  }

  /** Hands a checked request to a session's transport, counting it as activity while it is open. */
  private async dispatch(s: Session, req: http.IncomingMessage, res: http.ServerResponse, body?: unknown): Promise<void> {
    s.inFlight++;
    s.lastSeen = Date.now();
    res.once('close', () => {
      s.inFlight--;
      s.lastSeen = Date.now();
    });
    await s.transport.handleRequest(req, res, body);
  }

  /** A new session for an initialize request; undefined when the cap is reached and every session is busy. */
  private async newSession(): Promise<Session | undefined> {
    const { sessions, limits } = this;
    if (sessions.size >= limits.maxSessions) {
      // Clients that never say goodbye (DELETE) would otherwise lock everyone out until their
      // sessions expire; the least recently used idle one makes room, and its client, if still
      // there, gets 404 and starts a new session, as the spec prescribes.
      const victim = [...sessions.values()].filter((x) => x.inFlight === 0).sort((a, b) => a.lastSeen - b.lastSeen)[0];
      if (!victim) return undefined;
      await this.closeSession(victim, `session limit of ${limits.maxSessions} reached`);
    }
    const server = this.opts.newSession();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session.id = id;
        sessions.set(id, session);
        this.opts.logger.debug(`mcp: session ${id} opened (${sessions.size} open)`);
      },
    });
    const session: Session = { id: '', server, transport, lastSeen: Date.now(), inFlight: 0 };
    // The transport's errors (its 406 and 415 answers and the like) reach the server's onerror,
    // which createMcpServer logs.
    server.server.onclose = () => {
      if (session.id && sessions.get(session.id) === session) sessions.delete(session.id);
    };
    await server.connect(transport);
    return session;
  }
}
