/**
 * The browser chat's HTTP API as a local neighbour or a careless client meets it, against the
 * built `vlt serve`:
 * - the session cookie alone does not authorise (any page on another loopback port receives
 *   it); the page's session key must come with it, and sign-out ends the session;
 * - the notes vault's denied files stay unread through `citationTarget`;
 * - an oversized body gets 413 (not a reset), a deeply nested body 400, vault errors 4xx;
 * - the verbose request log never repeats the login code, and `.vlt/` is private.
 * The browser half (real Chromium carrying the cookie to a neighbour's port) is in
 * test/e2e/web-chat.test.ts; the idle expiry is checked in-process at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/ports';
import { createWebChat, httpStatusOf, MAX_BODY, parseRequest, SESSION_IDLE_MS } from '../../src/server/web-chat';
import type { WorkspaceServer } from '../../src/server/workspace';
import { CLI, tempDir, vlt } from '../helpers/cli';
import { ensureBuilt } from '../helpers/mcp-client';

interface Login {
  cookie: string;
  key: string;
}

/** Opens a one-time link as a browser would: the cookie from Set-Cookie, the key from the page. */
async function login(origin: string, linkPath: string): Promise<Login> {
  const res = await fetch(`${origin}${linkPath}`, { redirect: 'manual' });
  expect(res.status).toBe(200);
  const cookie = /^(vlt_chat=[^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  const key = /<meta name="vlt-chat-key" content="([^"]+)">/.exec(await res.text())?.[1];
  expect(cookie).toBeTruthy();
  expect(key).toBeTruthy();
  return { cookie: cookie!, key: key! };
}

function post(origin: string, method: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return fetch(`${origin}/chat/api/${method}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body }).then(async (r) => ({ status: r.status, text: await r.text() }));
}

describe('the browser chat API of `vlt serve`', () => {
  let ws: string;
  let child: ChildProcess;
  let origin: string;
  let link: string;
  let stderr = '';

  beforeAll(async () => {
    ensureBuilt();
    ws = tempDir('vlt-web-chat-');
    mkdirSync(path.join(ws, 'src'));
    mkdirSync(path.join(ws, 'notes'));
    writeFileSync(path.join(ws, 'src', 'app.ts'), 'export function add(a: number, b: number) {\n  return a + b;\n}\n');
    writeFileSync(path.join(ws, 'prod.pem'), '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n');
    symlinkSync(path.join('..', 'prod.pem'), path.join(ws, 'notes', 'cert.md'));
    writeFileSync(path.join(ws, 'notes', 'plan.md'), '# Plan\n\nAdd numbers.\n');
    writeFileSync(path.join(ws, 'vlt.toml'), '[vault]\nroot = "."\n');
    child = spawn(process.execPath, [CLI, '-v', 'serve', '--mcp-port', '0'], { cwd: ws, env: { PATH: process.env.PATH ?? '', HOME: ws, VLT_DAEMON: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      const t = setTimeout(() => reject(new Error(`vlt serve printed nothing in 60 s: ${stderr}`)), 60_000);
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const l = out.split('\n').find((x) => x.startsWith('{'));
        if (l) {
          clearTimeout(t);
          resolve(l);
        }
      });
      child.once('exit', (code) => reject(new Error(`vlt serve exited (${code}): ${stderr}`)));
    });
    const info = JSON.parse(line) as { chat_url: string };
    origin = new URL(info.chat_url).origin;
    link = new URL(info.chat_url).pathname + new URL(info.chat_url).search;
  }, 90_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    if (child) await new Promise((r) => child.once('exit', r));
    rmSync(ws, { recursive: true, force: true });
  });

  let session: Login;

  it('refuses the cookie without the page key, and the key without the cookie', async () => {
    session = await login(origin, link);
    const cookieOnly = await post(origin, 'citedLines', JSON.stringify({ items: [{ path: 'src/app.ts', start: 1, end: 3 }] }), { Cookie: session.cookie });
    expect(cookieOnly.status).toBe(401);
    expect(cookieOnly.text).not.toContain('a + b');
    const wrongKey = await post(origin, 'citedLines', JSON.stringify({ items: [] }), { Cookie: session.cookie, 'X-Vlt-Chat-Key': `${session.key.slice(0, -2)}xx` });
    expect(wrongKey.status).toBe(401);
    const keyOnly = await post(origin, 'citedLines', JSON.stringify({ items: [] }), { 'X-Vlt-Chat-Key': session.key });
    expect(keyOnly.status).toBe(401);
    const both = await post(origin, 'citedLines', JSON.stringify({ items: [{ path: 'src/app.ts', start: 1, end: 3 }] }), { Cookie: session.cookie, 'X-Vlt-Chat-Key': session.key });
    expect(both.status, both.text).toBe(200);
    expect(both.text).toContain('a + b');
  }, 60_000);

  it('never hands out a denied note through a citation', async () => {
    const auth = { Cookie: session.cookie, 'X-Vlt-Chat-Key': session.key };
    const ok = await post(origin, 'citationTarget', JSON.stringify({ citation: '[note:notes/plan.md]' }), auth);
    expect(ok.status, ok.text).toBe(200);
    const denied = await post(origin, 'citationTarget', JSON.stringify({ citation: '[note:notes/cert.md]' }), auth);
    expect(denied.status, denied.text).toBe(403);
    expect(denied.text).toMatch(/ACCESS_DENIED/);
    expect(denied.text).not.toContain('PRIVATE KEY-----');
  }, 60_000);

  it('answers an oversized body 413, a nested one 400, a missing note 404', async () => {
    const auth = { Cookie: session.cookie, 'X-Vlt-Chat-Key': session.key };
    const big = await post(origin, 'citedLines', JSON.stringify({ items: [], pad: 'x'.repeat(MAX_BODY + 10_000) }), auth);
    expect(big.status).toBe(413);
    expect(big.text).toMatch(/over \d+ bytes/);
    const nested = await post(origin, 'ask', `{"question":"q","sources":${'['.repeat(50_000)}${']'.repeat(50_000)}}`, auth);
    expect(nested.status, nested.text).toBe(400);
    expect(nested.text).toMatch(/^\{"error":"USAGE: /);
    const missing = await post(origin, 'citationTarget', JSON.stringify({ citation: '[note:nothing-here.md]' }), auth);
    expect(missing.status, missing.text).toBe(404);
    const unknown = await post(origin, 'citedLines', JSON.stringify({ items: [], extra: 1 }), auth);
    expect(unknown.status).toBe(400);
    const form = await fetch(`${origin}/chat/api/citedLines`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'items=1' });
    expect(form.status).toBe(415);
  }, 60_000);

  it('signs out: the cookie and key stop working', async () => {
    const auth = { Cookie: session.cookie, 'X-Vlt-Chat-Key': session.key };
    expect((await post(origin, 'logout', '{}', auth)).status).toBe(200);
    expect((await post(origin, 'sessions', '{}', auth)).status).toBe(401);
  }, 60_000);

  it('mints a new one-time link for the bearer token only, and `vlt mcp info --chat-link` prints a working one', async () => {
    expect((await fetch(`${origin}/chat/link`, { method: 'POST' })).status).toBe(401);
    expect((await fetch(`${origin}/chat/link`, { method: 'POST', headers: { Authorization: 'Bearer wrong-token-0123456789abcdef' } })).status).toBe(401);
    const r = await vlt(['mcp', 'info', '--chat-link', '--json'], { cwd: ws, env: { HOME: ws, VLT_DAEMON: '0' } });
    expect(r.code, r.stderr).toBe(0);
    const fresh = new URL((JSON.parse(r.stdout) as { chat_url: string }).chat_url);
    expect(fresh.origin).toBe(origin);
    const s = await login(origin, fresh.pathname + fresh.search);
    expect((await post(origin, 'sessions', '{}', { Cookie: s.cookie, 'X-Vlt-Chat-Key': s.key })).status).toBe(200);
  }, 60_000);

  it('logs no login code and keeps .vlt/ private', () => {
    expect(stderr).toMatch(/GET \/chat\/login\?… 200/);
    // The link is printed once when the server starts, and never again.
    const code = new URLSearchParams(link.split('?')[1]).get('code')!;
    expect(stderr.split(code).length - 1).toBe(1);
    expect(statSync(path.join(ws, '.vlt')).mode & 0o777).toBe(0o700);
  });
});

describe('`vlt mcp info --chat-link` with no server running', () => {
  it('says so in one line and exits non-zero', async () => {
    const dir = tempDir('vlt-no-serve-');
    try {
      const r = await vlt(['mcp', 'info', '--chat-link'], { cwd: dir, env: { HOME: dir, VLT_DAEMON: '0' } });
      expect(r.code).not.toBe(0);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/no `vlt serve` is running/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('browser sessions, in-process', () => {
  it('end after the idle time', async () => {
    let now = 1_000_000;
    const chat = createWebChat({} as WorkspaceServer, silentLogger, { now: () => now });
    const server = http.createServer((req, res) => {
      void chat.handle(req, res, new URL(req.url ?? '/', 'http://x').pathname);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const s = await login(origin, chat.loginPath());
      const auth = { Cookie: s.cookie, 'X-Vlt-Chat-Key': s.key };
      now += SESSION_IDLE_MS - 1000;
      expect((await fetch(`${origin}/chat/`, { headers: { Cookie: s.cookie } })).status).toBe(200);
      now += SESSION_IDLE_MS + 1;
      const r = await post(origin, 'logout', '{}', auth);
      expect(r.status).toBe(401);
      expect(r.text).toMatch(/idle/);
    } finally {
      server.close();
    }
  });

  it('types every request and maps error codes to statuses', () => {
    expect(() => parseRequest('citedLines', { items: [{ path: 'a', start: 'x', end: 1 }] })).toThrow(/items\.0\.start/);
    expect(parseRequest('ask', { question: 'q', sources: ['code'] })).toEqual({ question: 'q', sources: ['code'] });
    expect(httpStatusOf('PATH_OUTSIDE_VAULT')).toBe(400);
    expect(httpStatusOf('ACCESS_DENIED')).toBe(403);
    expect(httpStatusOf('NOT_FOUND')).toBe(404);
    expect(httpStatusOf('INTERNAL')).toBe(500);
  });
});
