/**
 * The chat in a browser, served by `vlt serve` beside the MCP endpoint: the same UI bundle as
 * the VS Code view (dist/chat.js, its HTTP bridge), JSON requests under `/chat/api/`, and a
 * question as a Server-Sent Events stream.
 *
 * Authentication. The bearer token never appears in a URL (URLs end up in logs and browser
 * history). `vlt serve` prints a one-time link `/chat/login?code=…`: the code is random, valid
 * for ten minutes and for one use, and is exchanged for an `HttpOnly; SameSite=Strict` session
 * cookie. Every other chat request needs that cookie. The HTTP server has already refused
 * foreign `Host` and `Origin` headers (DNS rebinding, cross-site pages) before these routes run.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import { toVltError, VltError } from '../core/errors';
import type { Logger } from '../core/ports';
import { ChatService, type ChatQuestion } from './chat';
import type { WorkspaceServer } from './workspace';

export const CHAT_PREFIX = '/chat/';
const COOKIE = 'vlt_chat';
const CODE_TTL_MS = 10 * 60_000;
const MAX_BODY = 256 * 1024;
/** Browser sessions kept at once; the oldest is forgotten past it. */
const MAX_BROWSER_SESSIONS = 32;

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Where the UI's files are, next to the program (dist/chat.js, media/chat.css). */
function asset(name: 'chat.js' | 'chat.css' | 'chat-web.css'): string | undefined {
  const here = typeof __dirname === 'string' ? __dirname : process.cwd();
  const dirs = name === 'chat.js' ? [here, path.resolve(here, '..', 'dist')] : [path.resolve(here, '..', 'media'), path.resolve(here, '..', '..', 'media')];
  return dirs.map((d) => path.join(d, name)).find((f) => existsSync(f));
}

const PAGE = `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="/chat/chat-web.css"><link rel="stylesheet" href="/chat/chat.css"><title>Vlt Oracle chat</title></head>
<body><div id="app"></div><script src="/chat/chat.js"></script></body></html>`;

export interface WebChat {
  /** A fresh one-time login link path (`/chat/login?code=…`). */
  loginPath(): string;
  /** Answers a request under {@link CHAT_PREFIX}; false when the path is not the chat's. */
  handle(req: http.IncomingMessage, res: http.ServerResponse, pathname: string): Promise<boolean>;
}

export function createWebChat(ws: WorkspaceServer, logger: Logger): WebChat {
  const chat = new ChatService(ws, 'browser chat');
  const codes = new Map<string, number>();
  const sessions: string[] = [];

  const hasSession = (req: http.IncomingMessage): boolean => {
    const m = new RegExp(`(?:^|;\\s*)${COOKIE}=([A-Za-z0-9_-]{20,100})`).exec(req.headers.cookie ?? '');
    if (!m?.[1]) return false;
    const given = Buffer.from(m[1]);
    return sessions.some((s) => s.length === m[1]!.length && timingSafeEqual(Buffer.from(s), given));
  };

  const send = (res: http.ServerResponse, status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', ...headers });
    res.end(body);
  };
  const sendJson = (res: http.ServerResponse, status: number, v: unknown) => send(res, status, 'application/json', JSON.stringify(v));

  const readJson = (req: http.IncomingMessage): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      let size = 0;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) {
          reject(new VltError('USAGE', `the request body is over ${MAX_BODY} bytes`));
          req.destroy();
        } else chunks.push(c);
      });
      req.on('end', () => {
        try {
          const v = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as unknown;
          resolve(v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
        } catch {
          reject(new VltError('USAGE', 'the request body is not JSON'));
        }
      });
      req.on('error', reject);
    });

  const api = async (method: string, body: Record<string, unknown>): Promise<unknown> => {
    switch (method) {
      case 'sessions':
        return chat.sessions();
      case 'useSession':
        return chat.useSession(typeof body.id === 'string' ? body.id : undefined);
      case 'sessionEvents':
        return chat.sessionEvents(typeof body.id === 'string' ? body.id : undefined);
      case 'citedLines':
        return chat.citedLines(Array.isArray(body.items) ? (body.items as Array<{ path: string; start: number; end: number }>).filter((i) => i && typeof i.path === 'string').map((i) => ({ path: i.path, start: Number(i.start) || 1, end: Number(i.end) || 1 })) : []);
      case 'citationTarget':
        return chat.target(String(body.citation ?? ''));
      case 'models':
      case 'selectModel': {
        const m = await chat.models();
        const wanted = method === 'selectModel' ? String(body.id ?? '') : m.default;
        if (!m.choices.some((c) => c.id === wanted)) throw new VltError('USAGE', `no model ${wanted.slice(0, 100)}`);
        return { choices: m.choices, active: wanted, ...(m.reason ? { reason: m.reason } : {}) };
      }
      default:
        throw new VltError('USAGE', `no chat request ${method.slice(0, 50)}`);
    }
  };

  const ask = async (req: http.IncomingMessage, res: http.ServerResponse, body: Record<string, unknown>): Promise<void> => {
    const q: ChatQuestion = { question: String(body.question ?? '') };
    if (Array.isArray(body.sources)) q.sources = body.sources.map(String);
    for (const k of ['noLlm', 'agent', 'explain'] as const) if (body[k] === true) q[k] = true;
    if (typeof body.session === 'string') q.session = body.session;
    if (typeof body.model === 'string') q.model = body.model;
    // A closed page (Stop, a reload) aborts the question: the model and every retrieval path.
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no', 'X-Content-Type-Options': 'nosniff' });
    const frame = (event: string, data: unknown) => {
      if (!res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    try {
      const answer = await chat.ask(q, (e) => frame('event', e), abort.signal);
      frame('answer', answer);
    } catch (e) {
      const err = toVltError(e);
      if (!abort.signal.aborted) logger.warn(`chat: ${err.code}: ${err.message}`);
      frame('error', { error: `${err.code}: ${err.message}` });
    }
    res.end();
  };

  return {
    loginPath() {
      const code = randomBytes(24).toString('base64url');
      codes.set(code, Date.now() + CODE_TTL_MS);
      return `${CHAT_PREFIX}login?code=${code}`;
    },

    async handle(req, res, pathname) {
      if (pathname === '/favicon.ico') {
        send(res, 404, 'text/plain; charset=utf-8', '');
        return true;
      }
      if (pathname !== '/chat' && !pathname.startsWith(CHAT_PREFIX)) return false;
      const method = req.method ?? 'GET';
      if (pathname === `${CHAT_PREFIX}login` && method === 'GET') {
        const code = new URL(req.url ?? '/', 'http://localhost').searchParams.get('code') ?? '';
        const expires = codes.get(code);
        codes.delete(code);
        if (expires === undefined || expires < Date.now()) {
          send(res, 403, 'text/plain; charset=utf-8', 'This link was used already or has expired. Restart `vlt serve` for a new one.');
          return true;
        }
        const session = randomBytes(32).toString('base64url');
        sessions.push(session);
        if (sessions.length > MAX_BROWSER_SESSIONS) sessions.shift();
        send(res, 303, 'text/plain; charset=utf-8', '', { Location: CHAT_PREFIX, 'Set-Cookie': `${COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/chat` });
        return true;
      }
      if (!hasSession(req)) {
        send(res, 401, 'text/plain; charset=utf-8', 'Open the one-time link that `vlt serve` printed to use the chat.');
        return true;
      }
      if (method === 'GET') {
        if (pathname === '/chat' || pathname === CHAT_PREFIX) {
          send(res, 200, 'text/html; charset=utf-8', PAGE, { 'Content-Security-Policy': CSP });
          return true;
        }
        const name = pathname.slice(CHAT_PREFIX.length);
        if (name === 'chat.js' || name === 'chat.css' || name === 'chat-web.css') {
          const file = asset(name);
          if (!file) send(res, 404, 'text/plain; charset=utf-8', `${name} is not installed next to the program; run npm run build`);
          else send(res, 200, name.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8', readFileSync(file));
          return true;
        }
      }
      const m = /^\/chat\/api\/([A-Za-z]+)$/.exec(pathname);
      if (!m || method !== 'POST') {
        send(res, 404, 'text/plain; charset=utf-8', 'Not Found');
        return true;
      }
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
        sendJson(res, 415, { error: 'USAGE: send Content-Type: application/json' });
        return true;
      }
      try {
        const body = await readJson(req);
        if (m[1] === 'ask') await ask(req, res, body);
        else sendJson(res, 200, { result: await api(m[1]!, body) });
      } catch (e) {
        const err = toVltError(e);
        if (!res.headersSent) sendJson(res, err.code === 'USAGE' || err.code === 'PATH_OUTSIDE_WORKSPACE' || err.code === 'ACCESS_DENIED' ? 400 : 500, { error: `${err.code}: ${err.message}` });
      }
      return true;
    },
  };
}
