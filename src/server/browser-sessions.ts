/**
 * The browser chat's sign-in (web-chat.ts serves the chat). The bearer token never appears in a
 * URL (URLs end up in logs and browser history). `vlt serve` prints a one-time link
 * `/chat/login?code=…`: the code is random, valid for ten minutes and for one use. Opening it
 * starts a browser session with two secrets:
 *
 * - an `HttpOnly; SameSite=Strict` cookie, which lets the page and its assets load;
 * - a session key, written once into the login page (never into a URL) and kept by the page in
 *   `sessionStorage`, which every `/chat/api/*` request must send in {@link KEY_HEADER}.
 *
 * The cookie alone is not enough because browsers do not separate cookies by port: any page
 * served from another port of 127.0.0.1 receives it, and any local process can replay it.
 * `sessionStorage` is per origin, port included, so no other port can read the key. A session
 * ends after {@link SESSION_IDLE_MS} without a request, or when the page signs out.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type * as http from 'node:http';

/** The cookie that names a browser session. */
export const COOKIE = 'vlt_chat';
/** The request header that carries the page's session key. */
export const KEY_HEADER = 'x-vlt-chat-key';
/** How long a one-time login code is valid. */
const CODE_TTL_MS = 10 * 60_000;
/** A browser session ends after this long without a request. */
export const SESSION_IDLE_MS = 8 * 60 * 60_000;
/** Browser sessions kept at once; the least recently used is forgotten past it. */
const MAX_BROWSER_SESSIONS = 32;

export interface BrowserSession {
  cookie: string;
  key: string;
  lastUsed: number;
}

const sameSecret = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export class BrowserSessions {
  /** One-time login codes and when each expires. */
  private readonly codes = new Map<string, number>();
  /** Least recently used first. */
  private readonly sessions: BrowserSession[] = [];

  constructor(private readonly now: () => number) {}

  /** A fresh one-time login code; expired ones are forgotten. */
  newCode(): string {
    const code = randomBytes(24).toString('base64url');
    const now = this.now();
    this.codes.set(code, now + CODE_TTL_MS);
    for (const [c, t] of this.codes) if (t < now) this.codes.delete(c);
    return code;
  }

  /** Uses up a login code: a new session, or undefined when the code was used already or expired. */
  redeem(code: string): BrowserSession | undefined {
    const expires = this.codes.get(code);
    this.codes.delete(code);
    if (expires === undefined || expires < this.now()) return undefined;
    const s: BrowserSession = { cookie: randomBytes(32).toString('base64url'), key: randomBytes(32).toString('base64url'), lastUsed: this.now() };
    this.sessions.push(s);
    if (this.sessions.length > MAX_BROWSER_SESSIONS) this.sessions.shift();
    return s;
  }

  /** The live session the request's cookie names; an idle one is ended here. */
  of(req: http.IncomingMessage): BrowserSession | undefined {
    const m = new RegExp(`(?:^|;\\s*)${COOKIE}=([A-Za-z0-9_-]{20,100})`).exec(req.headers.cookie ?? '');
    if (!m?.[1]) return undefined;
    const given = m[1];
    const i = this.sessions.findIndex((s) => sameSecret(s.cookie, given));
    const s = this.sessions[i];
    if (!s) return undefined;
    if (this.now() - s.lastUsed > SESSION_IDLE_MS) {
      this.sessions.splice(i, 1);
      return undefined;
    }
    return s;
  }

  /** Whether the request also carries the page's key of that session. */
  hasKey(req: http.IncomingMessage, s: BrowserSession): boolean {
    const v = req.headers[KEY_HEADER];
    const given = Array.isArray(v) ? v[0] : v;
    return typeof given === 'string' && sameSecret(s.key, given);
  }

  /** A request of the session: it is the most recently used now. */
  touch(s: BrowserSession): void {
    s.lastUsed = this.now();
    const i = this.sessions.indexOf(s);
    if (i >= 0 && i !== this.sessions.length - 1) this.sessions.push(...this.sessions.splice(i, 1));
  }

  /** Signs the session out. */
  end(s: BrowserSession): void {
    const i = this.sessions.indexOf(s);
    if (i >= 0) this.sessions.splice(i, 1);
  }
}
