/**
 * The chat in a browser, served by `vlt serve` beside the MCP endpoint: the same UI bundle as
 * the VS Code view (dist/chat.js, its HTTP bridge), JSON requests under `/chat/api/`, and a
 * question as a Server-Sent Events stream.
 *
 * Signing in (a one-time link, then a cookie and a page-held key) is browser-sessions.ts.
 *
 * The HTTP server has already refused foreign `Host` and `Origin` headers (DNS rebinding,
 * cross-site pages) before these routes run. Every request body is parsed against a schema.
 */
import { existsSync, readFileSync } from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import { z } from 'zod';
import { toVltError, VltError, type ErrorCode } from '../core/errors';
import type { Logger } from '../core/ports';
import { BrowserSessions, COOKIE, type BrowserSession } from './browser-sessions';
import { ChatService, type ChatQuestion } from './chat';
import { refuseOversizedBody } from './http-body';
import type { WorkspaceServer } from './workspace';

export const CHAT_PREFIX = '/chat/';
export { KEY_HEADER, SESSION_IDLE_MS } from './browser-sessions';
export const MAX_BODY = 256 * 1024;
/** How long the page waits for the model list to name the model in its header. */
const ABOUT_WAIT_MS = 1000;

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Where the UI's files are, next to the program (dist/chat.js, media/chat.css). */
type Asset = 'chat.js' | 'chat.css' | 'chat-web.css' | 'icon.svg';
const ASSET_TYPES: Record<Asset, string> = {
  'chat.js': 'text/javascript; charset=utf-8',
  'chat.css': 'text/css; charset=utf-8',
  'chat-web.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
};
const isAsset = (name: string): name is Asset => Object.hasOwn(ASSET_TYPES, name);

function asset(name: Asset): string | undefined {
  const here = typeof __dirname === 'string' ? __dirname : process.cwd();
  const dirs = name === 'chat.js' ? [here, path.resolve(here, '..', 'dist')] : [path.resolve(here, '..', 'media'), path.resolve(here, '..', '..', 'media')];
  return dirs.map((d) => path.join(d, name)).find((f) => existsSync(f));
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page: a header naming the workspace and the model that answers by default, then the chat.
 * The login response carries the session key in a meta element the page script takes and removes.
 */
function page(about: { workspace: string; model: string }, key?: string): string {
  const workspace = escapeHtml(about.workspace);
  return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">${key ? `\n<meta name="vlt-chat-key" content="${key}">` : ''}
<link rel="icon" href="/chat/icon.svg" type="image/svg+xml"><link rel="stylesheet" href="/chat/chat-web.css"><link rel="stylesheet" href="/chat/chat.css"><title>${workspace} · Vlt Oracle</title></head>
<body><header class="web-header"><span class="web-title">Vlt Oracle <span class="web-workspace" title="${escapeHtml(about.workspace)}">${workspace}</span></span><span class="web-model" title="The model that answers unless you pick another">${escapeHtml(about.model)}</span><button id="signout" type="button" title="End this browser session">Sign out</button></header><div id="app"></div><script src="/chat/chat.js"></script></body></html>`;
}

const NEED_LINK = 'Open the one-time link that `vlt serve` printed to use the chat; `vlt mcp info --chat-link` prints a new one.';

/** The HTTP status of an error a chat request met: the caller's mistakes are 4xx, the rest 500. */
export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'USAGE':
    case 'PATH_OUTSIDE_WORKSPACE':
    case 'PATH_OUTSIDE_VAULT':
    case 'NOT_A_DIRECTORY':
      return 400;
    case 'ACCESS_DENIED':
    case 'RESTRICTED':
    case 'READ_ONLY':
      return 403;
    case 'NOT_FOUND':
    case 'PATH_NOT_FOUND':
    case 'REF_NOT_FOUND':
    case 'INDEX_MISSING':
      return 404;
    case 'INDEX_LOCKED':
    case 'MEMORY_LOCKED':
      return 409;
    case 'LLM_NOT_CONFIGURED':
    case 'LSP_UNAVAILABLE':
    case 'GIT_UNAVAILABLE':
    case 'PARSER_UNAVAILABLE':
      return 503;
    default:
      return 500;
  }
}

// The shapes of the chat's requests. Strings and arrays are bounded so that no body makes the
// server do work out of proportion to it; `.strict()` refuses a key nobody reads.
const id = z.string().max(200);
const span = z.object({ path: z.string().min(1).max(4096), start: z.number().finite(), end: z.number().finite() });
const REQUESTS = {
  sessions: z.object({}).strict(),
  useSession: z.object({ id: id.optional() }).strict(),
  sessionEvents: z.object({ id: id.optional() }).strict(),
  citedLines: z.object({ items: z.array(span).max(200) }).strict(),
  citationTarget: z.object({ citation: z.string().max(4096) }).strict(),
  models: z.object({}).strict(),
  selectModel: z.object({ id }).strict(),
  logout: z.object({}).strict(),
  ask: z
    .object({
      question: z.string().max(100_000),
      sources: z.array(z.string().max(100)).max(20).optional(),
      noLlm: z.boolean().optional(),
      agent: z.boolean().optional(),
      explain: z.boolean().optional(),
      session: id.optional(),
      model: id.optional(),
      /** The view's name for the question; the stream itself says which question it answers. */
      askId: id.optional(),
    })
    .strict(),
} as const;
type RequestName = keyof typeof REQUESTS;

/** Parses a chat request's body by its schema; a wrong shape is USAGE naming the first problem. */
export function parseRequest<N extends RequestName>(name: N, body: unknown): z.infer<(typeof REQUESTS)[N]> {
  const r = REQUESTS[name].safeParse(body);
  if (r.success) return r.data as z.infer<(typeof REQUESTS)[N]>;
  const issue = r.error.issues[0];
  const where = issue?.path.length ? issue.path.map(String).join('.') : 'the body';
  throw new VltError('USAGE', `${name}: ${where}: ${issue?.message ?? 'invalid'}`.slice(0, 300));
}

export interface WebChat {
  /** A fresh one-time login link path (`/chat/login?code=…`). */
  loginPath(): string;
  /** Answers a request under {@link CHAT_PREFIX}; false when the path is not the chat's. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, pathname: string): Promise<boolean>;
}

export function createWebChat(ws: WorkspaceServer, logger: Logger, opts: { now?: () => number; bearerOk?: (authorization: string | undefined) => boolean } = {}): WebChat {
  return new WebChatServer(ws, logger, opts.now ?? Date.now, opts.bearerOk);
}

type Res = http.ServerResponse;

function send(res: Res, status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', ...headers });
  res.end(body);
}

function sendJson(res: Res, status: number, v: unknown, headers: Record<string, string> = {}): void {
  send(res, status, 'application/json', JSON.stringify(v), headers);
}

/** Reads a JSON body; undefined when it was too large, after answering 413 (http-body.ts). */
function readJson(req: http.IncomingMessage, res: Res): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    const declared = Number(req.headers['content-length']);
    const tooLarge = () => {
      refuseOversizedBody(req, res, JSON.stringify({ error: `USAGE: the request body is over ${MAX_BODY} bytes` }));
      resolve(undefined);
    };
    if (Number.isFinite(declared) && declared > MAX_BODY) return tooLarge();
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        chunks.length = 0;
        tooLarge();
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return;
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as unknown);
      } catch {
        reject(new VltError('USAGE', 'the request body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}

/** The chat's routes over one workspace server: sign-in, the page and its assets, and the API. */
class WebChatServer implements WebChat {
  private readonly chat: ChatService;
  private readonly sessions: BrowserSessions;

  constructor(
    private readonly ws: WorkspaceServer,
    private readonly logger: Logger,
    now: () => number,
    private readonly bearerOk: ((authorization: string | undefined) => boolean) | undefined,
  ) {
    this.chat = new ChatService(ws, 'browser chat');
    this.sessions = new BrowserSessions(now);
  }

  loginPath(): string {
    return `${CHAT_PREFIX}login?code=${this.sessions.newCode()}`;
  }

  async handle(req: http.IncomingMessage, res: Res, pathname: string): Promise<boolean> {
    if (pathname === '/favicon.ico') {
      // The page names its icon (/chat/icon.svg); a browser that asks here anyway gets nothing, not an error.
      res.writeHead(204).end();
      return true;
    }
    if (pathname !== '/chat' && !pathname.startsWith(CHAT_PREFIX)) return false;
    const method = req.method ?? 'GET';
    if (pathname === `${CHAT_PREFIX}login` && method === 'GET') {
      await this.login(req, res);
      return true;
    }
    // A new one-time link for whoever holds the MCP bearer token (`vlt mcp info --chat-link`):
    // a browser session that ended needs no restart of the server.
    if (pathname === `${CHAT_PREFIX}link` && method === 'POST') {
      if (!this.bearerOk?.(req.headers.authorization)) sendJson(res, 401, { error: 'ACCESS_DENIED: send the MCP bearer token (`vlt mcp info`)' }, { 'WWW-Authenticate': 'Bearer realm="vlt-oracle"' });
      else sendJson(res, 200, { result: { path: this.loginPath() } });
      return true;
    }
    const session = this.sessions.of(req);
    if (method === 'GET' && (await this.get(res, pathname, session))) return true;
    const m = /^\/chat\/api\/([A-Za-z]+)$/.exec(pathname);
    if (!m?.[1] || method !== 'POST') {
      send(res, 404, 'text/plain; charset=utf-8', 'Not Found');
      return true;
    }
    await this.apiRequest(req, res, m[1], session);
    return true;
  }

  /** The page and its assets, for a signed-in browser; false for a GET of anything else. */
  private async get(res: Res, pathname: string, session: BrowserSession | undefined): Promise<boolean> {
    if (!session) {
      send(res, 401, 'text/plain; charset=utf-8', NEED_LINK);
      return true;
    }
    if (pathname === '/chat' || pathname === CHAT_PREFIX) {
      send(res, 200, 'text/html; charset=utf-8', page(await this.about()), { 'Content-Security-Policy': CSP });
      return true;
    }
    const name = pathname.slice(CHAT_PREFIX.length);
    if (!isAsset(name)) return false;
    const file = asset(name);
    if (!file) send(res, 404, 'text/plain; charset=utf-8', `${name} is not installed next to the program; run npm run build`);
    else send(res, 200, ASSET_TYPES[name], readFileSync(file));
    return true;
  }

  /** One `/chat/api/<name>` request: the session and its key checked, the body parsed by its schema. */
  private async apiRequest(req: http.IncomingMessage, res: Res, name: string, session: BrowserSession | undefined): Promise<void> {
    // The cookie says which session; only the key the page holds proves the page is asking.
    if (!session || !this.sessions.hasKey(req, session)) {
      sendJson(res, 401, { error: `ACCESS_DENIED: ${session ? "this request lacks the page's session key" : 'no browser session (signed out, idle too long, or never opened)'}. ${NEED_LINK}` });
      return;
    }
    this.sessions.touch(session);
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      sendJson(res, 415, { error: 'USAGE: send Content-Type: application/json' });
      return;
    }
    try {
      if (!Object.hasOwn(REQUESTS, name)) throw new VltError('USAGE', `no chat request ${name.slice(0, 50)}`);
      const body = await readJson(req, res);
      if (body === undefined) return;
      if (name === 'ask') await this.ask(res, body);
      else if (name === 'logout') {
        parseRequest('logout', body);
        this.sessions.end(session);
        sendJson(res, 200, { result: { signedOut: true } }, { 'Set-Cookie': `${COOKIE}=; HttpOnly; SameSite=Strict; Path=/chat; Max-Age=0` });
      } else sendJson(res, 200, { result: await this.api(name as RequestName, body) });
    } catch (e) {
      const err = toVltError(e);
      const status = httpStatusOf(err.code);
      if (status === 500) this.logger.warn(`chat: ${name}: ${err.code}: ${err.message}`);
      if (!res.headersSent) sendJson(res, status, { error: `${err.code}: ${err.message}` });
    }
  }

  private async api(method: RequestName, body: unknown): Promise<unknown> {
    const chat = this.chat;
    switch (method) {
      case 'sessions':
        parseRequest(method, body);
        return chat.sessions();
      case 'useSession':
        return chat.useSession(parseRequest(method, body).id);
      case 'sessionEvents':
        return chat.sessionEvents(parseRequest(method, body).id);
      case 'citedLines':
        return chat.citedLines(parseRequest(method, body).items.map((i) => ({ path: i.path, start: Math.max(1, i.start), end: Math.max(1, i.end) })));
      case 'citationTarget':
        return chat.target(parseRequest(method, body).citation);
      case 'models':
      case 'selectModel': {
        const wantedId = method === 'selectModel' ? parseRequest(method, body).id : (parseRequest(method, body), undefined);
        const m = await chat.models();
        const wanted = wantedId ?? m.default;
        if (!m.choices.some((c) => c.id === wanted)) throw new VltError('USAGE', `no model ${wanted.slice(0, 100)}`);
        return { choices: m.choices, active: wanted, ...(m.reason ? { reason: m.reason } : {}) };
      }
      default:
        throw new VltError('USAGE', `no chat request ${String(method).slice(0, 50)}`);
    }
  }

  /** A question, answered as a Server-Sent Events stream: its events, then the answer (or the error). */
  private async ask(res: Res, body: unknown): Promise<void> {
    const input = parseRequest('ask', body);
    const q: ChatQuestion = { question: input.question };
    if (input.sources) q.sources = input.sources;
    for (const k of ['noLlm', 'agent', 'explain'] as const) if (input[k] === true) q[k] = true;
    if (input.session !== undefined) q.session = input.session;
    if (input.model !== undefined) q.model = input.model;
    // A closed page (Stop, a reload) aborts the question: the model and every retrieval path.
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no', 'X-Content-Type-Options': 'nosniff' });
    const frame = (event: string, data: unknown) => {
      if (!res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    try {
      const answer = await this.chat.ask(q, (e) => frame('event', e), abort.signal);
      frame('answer', answer);
    } catch (e) {
      const err = toVltError(e);
      if (!abort.signal.aborted) this.logger.warn(`chat: ${err.code}: ${err.message}`);
      frame('error', { error: `${err.code}: ${err.message}` });
    }
    res.end();
  }

  /**
   * What the page's header says: the workspace's folder name and the default model. The page
   * never waits long for it (the model list waits for the index to open, which a first build
   * delays): past {@link ABOUT_WAIT_MS} the header names no model.
   */
  private async about(): Promise<{ workspace: string; model: string }> {
    const workspace = typeof this.ws.root === 'string' ? path.basename(this.ws.root) : 'workspace';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const models = await Promise.race([
      this.chat.models().catch(() => undefined),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ABOUT_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    const active = models?.choices.find((c) => c.id === models.default);
    return { workspace, model: !models ? '' : active && active.id !== 'none' ? active.label : 'no model: evidence briefs' };
  }

  private async login(req: http.IncomingMessage, res: Res): Promise<void> {
    const code = new URL(req.url ?? '/', 'http://localhost').searchParams.get('code') ?? '';
    const s = this.sessions.redeem(code);
    if (!s) {
      send(res, 403, 'text/plain; charset=utf-8', 'This link was used already or has expired. `vlt mcp info --chat-link` prints a new one.');
      return;
    }
    // The page, not a redirect: the key travels in this one response body, never in a URL.
    send(res, 200, 'text/html; charset=utf-8', page(await this.about(), s.key), { 'Content-Security-Policy': CSP, 'Set-Cookie': `${COOKIE}=${s.cookie}; HttpOnly; SameSite=Strict; Path=/chat` });
  }
}
