/**
 * The chat in a browser: the built `vlt serve` as a user starts it, Debian's chromium through
 * playwright-core. The page needs the one-time link (a second use is refused), asks, streams
 * the answer from the scripted fake model, and opens a citation as a read-only file view with
 * the cited lines marked.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, copyFixture } from '../helpers/cli';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai';
import { CHROMIUM, REPO_ROOT } from './harness';

const missing = [CHROMIUM, CLI].filter((p) => !existsSync(p)).join(', ');

interface Served {
  child: ChildProcess;
  dir: string;
  /** The workspace folder's name. */
  workspace: string;
  url: string;
  chatUrl: string;
  cleanup(): void;
}

function serve(env: Record<string, string>): Promise<Served> {
  const { dir, cleanup } = copyFixture('test/fixtures/lsp/ts-project');
  const child = spawn(process.execPath, [CLI, 'serve', '--mcp-port', '0'], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: dir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`vlt serve printed nothing in 60 s: ${stderr}`)), 60_000);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      clearTimeout(t);
      const info = JSON.parse(line) as { url: string; chat_url?: string };
      if (!info.chat_url) return reject(new Error(`no chat_url in ${line}`));
      resolve({ child, dir, workspace: path.basename(dir), url: info.url, chatUrl: info.chat_url, cleanup });
    });
    child.once('exit', (code) => reject(new Error(`vlt serve exited (${code}): ${stderr}`)));
  });
}

describe.skipIf(Boolean(missing))(missing ? `e2e: the browser chat (skipped: ${missing} missing)` : 'e2e: the browser chat', () => {
  let fake: FakeOpenAI;
  let browser: Browser;
  const running: Served[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await fake?.close();
  });
  afterEach(async () => {
    for (const s of running.splice(0)) {
      s.child.kill('SIGTERM');
      await new Promise((r) => s.child.once('exit', r));
      s.cleanup();
    }
  });

  it('needs the one-time link, streams an answer and opens a citation in a file view', async () => {
    const s = await serve({ VLT_LLM_BASE_URL: fake.baseURL, VLT_LLM_API_KEY: 'test-key', VLT_LLM_MODEL: 'fake-chat' });
    running.push(s);
    const origin = new URL(s.chatUrl).origin;
    const page = await browser.newPage();
    try {
      // No cookie: refused, and the API too.
      const denied = await page.goto(`${origin}/chat/`);
      expect(denied?.status()).toBe(401);
      expect((await page.request.post(`${origin}/chat/api/sessions`, { data: {} })).status()).toBe(401);

      // The link logs in once; the bearer token is never in a URL.
      const token = (await page.request.get(`${origin}/mcp`)).status();
      expect(token).toBe(401);
      await page.goto(s.chatUrl);
      await page.waitForSelector('#input');
      // The login code left the address bar, and the session key is not in the document.
      expect(new URL(page.url()).pathname).toBe('/chat/');
      expect(new URL(page.url()).search).toBe('');
      expect(await page.$('meta[name="vlt-chat-key"]')).toBeNull();
      const again = await (await browser.newPage()).goto(s.chatUrl);
      expect(again?.status()).toBe(403);

      fake.chunkDelayMs = 40;
      fake.script.chat.push(...Array.from({ length: 6 }, () => ({ content: 'Numbers are added by `add` [math.ts:2-4], which `main.ts` calls.' })));
      await page.fill('#input', 'How does add work?');
      await page.press('#input', 'Enter');
      await page.waitForSelector('.msg.assistant.streaming');
      await page.waitForSelector('.msg.assistant.done', { timeout: 60_000 });
      expect(await page.textContent('.msg.assistant .answer')).toContain('Numbers are added by');
      expect(await page.textContent('.msg.assistant .footer')).toContain('fake-chat');
      // The header names the workspace and the model that answers.
      expect(await page.textContent('.web-header .web-workspace')).toBe(s.workspace);
      await page.waitForFunction(() => document.querySelector('.web-header .web-model')?.textContent === 'fake-chat');
      expect(await page.title()).toContain(s.workspace);

      // Under the prose, what it cited as chips that open the places.
      expect(await page.$$eval('.msg.assistant .refs a.cite', (els) => els.map((e) => e.textContent))).toEqual(['math.ts:2-4']);
      await page.click('.msg.assistant .answer a.cite');
      await page.waitForSelector('#overlay:not([hidden]) .line.hit');
      const hit = await page.$$eval('#overlay .line.hit', (els) => els.map((e) => e.textContent ?? ''));
      expect(hit.length).toBe(3);
      expect(hit[0]).toContain('export function add');
      // The marked lines stack one below the other, each the width of the view, and the first is in view.
      const boxes = await page.$$eval('#overlay .line.hit', (els) => els.map((e) => e.getBoundingClientRect()).map((r) => ({ top: r.top, left: r.left, width: r.width, bottom: r.bottom })));
      for (let i = 1; i < boxes.length; i++) {
        expect(boxes[i]!.top).toBeGreaterThanOrEqual(boxes[i - 1]!.bottom - 1);
        expect(boxes[i]!.left).toBe(boxes[0]!.left);
      }
      const view = await page.$eval('#overlay', (e) => e.getBoundingClientRect().bottom);
      expect(boxes[0]!.top).toBeLessThan(view);
      await page.keyboard.press('Escape');
      expect(await page.$eval('#overlay', (e) => (e as HTMLElement).hidden)).toBe(true);

      // Another browser session (a new link) joins the shared session and shows its conversation.
      const bearer = readFileSync(path.join(s.dir, '.vlt', 'mcp-token'), 'utf8').trim();
      const link = (await (await fetch(`${origin}/chat/link`, { method: 'POST', headers: { Authorization: `Bearer ${bearer}` } })).json()) as { result: { path: string } };
      const second = await browser.newPage();
      try {
        await second.goto(`${origin}${link.result.path}`);
        await second.waitForSelector('.msg.user .question');
        expect(await second.textContent('.msg.user .question')).toContain('How does add work?');
        expect(await second.textContent('.msg.assistant')).toContain('Numbers are added by');
      } finally {
        await second.close();
      }
    } finally {
      await page.close();
    }
  }, 120_000);

  it('without a model: the evidence brief leads with the places, and how it was found is folded under Details', async () => {
    const s = await serve({});
    running.push(s);
    const page = await browser.newPage({ colorScheme: 'light' });
    // A product page: nothing in the console, no request that fails (the favicon included).
    const problems: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && problems.push(`console: ${m.text()}`)));
    page.on('response', (r) => void (r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`)));
    try {
      await page.goto(s.chatUrl);
      await page.waitForSelector('#input');
      // The header names the model once the page knows it (the server names it when it can at once).
      await page.waitForFunction(() => document.querySelector('.web-header .web-model')?.textContent === 'no model: evidence briefs');
      await page.fill('#input', 'How does add work?');
      await page.press('#input', 'Enter');
      await page.waitForSelector('.msg.assistant.done', { timeout: 60_000 });
      const answer = (await page.textContent('.msg.assistant .answer')) ?? '';
      expect(answer).toContain('Evidence brief');
      // The answer's start stays in view: the question sits in the log's viewport, however long the brief.
      const [q, log] = await Promise.all([page.$eval('.msg.user', (e) => e.getBoundingClientRect().top), page.$eval('#log', (e) => e.getBoundingClientRect().top)]);
      expect(q, 'the top of the question against the top of the log').toBeGreaterThanOrEqual(log - 1);
      expect(answer).toContain('math.ts');
      expect(answer).not.toMatch(/Searched|Where this sits|question type/i);
      // The evidence after the lead places is folded under "More evidence (N)", closed.
      const more = page.locator('.msg.assistant .answer details.more');
      expect(await more.locator('summary').first().textContent()).toMatch(/^More evidence \(\d+\)$/);
      expect(await more.first().getAttribute('open')).toBeNull();
      expect(await more.first().locator('ul').isVisible()).toBe(false);
      await page.screenshot({ path: path.join(REPO_ROOT, '.e2e/artifacts/web-chat/brief.png') }).catch(() => undefined);
      const details = page.locator('.msg.assistant .footer details.details');
      expect(await details.getAttribute('open')).toBeNull();
      expect(await details.locator('summary').textContent()).toBe('Details');
      expect(await details.locator('.markdown').isVisible()).toBe(false);
      await details.locator('summary').click();
      expect(await details.locator('.markdown').textContent()).toMatch(/Searched: code search \(\d+ found/);
      // Highlighted code is readable on the light page: every token colour against its block's
      // background has a contrast of at least 3:1 (the dark-theme colours on white had 1.2:1).
      const worst = await page.$$eval('.msg.assistant .answer pre code [class^="hljs-"]', (els) => {
        const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
        const lum = (c: string) => {
          const [r = 0, g = 0, b = 0] = rgb(c).map((v) => v / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
          return 0.2126 * r + 0.7152 * g + 0.0722 * b;
        };
        let min = 21;
        for (const e of els) {
          const pre = e.closest('pre')!;
          const bg = getComputedStyle(pre).backgroundColor;
          // A mostly transparent block background shows the page's.
          const alpha = Number(bg.match(/[\d.]+/g)?.[3] ?? 1);
          const back = alpha < 0.5 ? getComputedStyle(document.body).backgroundColor : bg;
          const [a, b] = [lum(getComputedStyle(e).color), lum(back)];
          min = Math.min(min, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
        }
        return els.length ? min : undefined;
      });
      expect(worst).toBeGreaterThanOrEqual(3);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('a page on another loopback port receives the cookie, and the cookie alone reads nothing', async () => {
    const s = await serve({});
    running.push(s);
    const origin = new URL(s.chatUrl).origin;
    // The neighbour: another process listening on another port of the same host.
    let stolen = '';
    const neighbour = http.createServer((req, res) => {
      stolen ||= req.headers.cookie ?? '';
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!DOCTYPE html><title>neighbour</title>');
    });
    await new Promise<void>((r) => neighbour.listen(0, '127.0.0.1', r));
    const page = await browser.newPage();
    try {
      await page.goto(s.chatUrl);
      await page.waitForSelector('#input');
      // Browsers do not separate cookies by port: the neighbour's own /chat/ path gets it.
      await page.goto(`http://127.0.0.1:${(neighbour.address() as AddressInfo).port}/chat/x`);
      expect(stolen).toMatch(/vlt_chat=/);
      const replay = await fetch(`${origin}/chat/api/citedLines`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Cookie: stolen },
        body: JSON.stringify({ items: [{ path: 'math.ts', start: 1, end: 3 }] }),
      });
      expect(replay.status).toBe(401);
      expect(await replay.text()).not.toContain('export function add');
      // Back on the chat's own origin, the page still works: its key is in its sessionStorage.
      await page.goto(`${origin}/chat/`);
      await page.waitForSelector('#input');
      const key = await page.evaluate(() => sessionStorage.getItem('vlt-chat-key'));
      expect(key).toBeTruthy();
      const own = await page.evaluate(async () => (await fetch('/chat/api/sessions', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Vlt-Chat-Key': sessionStorage.getItem('vlt-chat-key') ?? '' }, body: '{}' })).status);
      expect(own).toBe(200);
      // Sign out ends it.
      await page.click('#signout');
      await page.waitForFunction(() => document.body.textContent?.includes('Signed out'));
      const after = await fetch(`${origin}/chat/`, { headers: { Cookie: stolen } });
      expect(after.status).toBe(401);
    } finally {
      await page.close();
      neighbour.close();
    }
  }, 120_000);
});
