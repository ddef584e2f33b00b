/**
 * `npm run bench -- chat`: the chat UI measured as a user feels it, in Debian's chromium on the
 * page `vlt serve` serves (the same bundle as the VS Code view, with the HTTP bridge instead of
 * postMessage), on the Go standard library:
 * - Enter → the extractive evidence brief rendered, over the Go questions of the oracle set;
 * - the model's first streamed token (the fake model's clock) → that text in the page;
 * - a 5,000-token answer streamed word by word: long tasks (frames over 50 ms) while it renders;
 * - the minified bundle's size.
 *
 * Usage: node .bench/chat-bench.cjs GO_SRC   (prints JSON on stdout)
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { startFakeOpenAI } from '../helpers/fake-openai';
import { CHROMIUM, REPO_ROOT } from '../e2e/harness';

const CLI = path.join(REPO_ROOT, 'dist/cli.js');
const work = path.join(REPO_ROOT, '.bench', 'chat');

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

/** A long markdown answer: paragraphs with citations, lists and code blocks, about `tokens` tokens. */
function longAnswer(tokens: number): string {
  const parts: string[] = [];
  let i = 0;
  while (parts.join('\n').length < tokens * 4) {
    i++;
    parts.push(`## Part ${i}\n\nThe server reads the request line and the headers, then hands the connection to the handler [net/http/server.go:${1800 + i}]. Timeouts come from the server's fields [net/http/server.go:${2600 + i}-${2610 + i}].\n`);
    parts.push(`- first, \`readRequest\` parses the method and the URL\n- then the header is canonicalised [net/textproto/reader.go:${480 + i}]\n- finally the body is wrapped\n`);
    parts.push('```go\nfunc (c *conn) serve(ctx context.Context) {\n\tfor {\n\t\tw, err := c.readRequest(ctx)\n\t\tif err != nil {\n\t\t\treturn\n\t\t}\n\t\tserverHandler{c.server}.ServeHTTP(w, w.req)\n\t}\n}\n```\n');
  }
  return parts.join('\n');
}

async function main(): Promise<void> {
  const goSrc = process.argv[2];
  if (!goSrc || !existsSync(goSrc)) throw new Error('usage: chat-bench GO_SRC');
  if (!existsSync(CHROMIUM)) {
    process.stdout.write(JSON.stringify({ skipped: `${CHROMIUM} missing: run test/e2e/install.sh` }));
    return;
  }
  const bundleBytes = statSync(path.join(REPO_ROOT, 'dist/chat.js')).size;
  const go = path.join(work, 'go');
  if (!existsSync(path.join(go, '.vlt', 'index.db'))) {
    mkdirSync(work, { recursive: true });
    console.error('[chat] indexing a copy of the Go standard library…');
    cpSync(goSrc, go, { recursive: true, dereference: true });
    execFileSync(process.execPath, [CLI, 'coderag', 'init'], { cwd: go, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, VLT_EMBEDDINGS: 'off' } });
  }
  const fake = await startFakeOpenAI();
  const child = spawn(process.execPath, [CLI, 'serve', '--mcp-port', '0'], {
    cwd: go,
    env: { ...process.env, VLT_EMBEDDINGS: 'off', VLT_LLM_BASE_URL: fake.baseURL, VLT_LLM_API_KEY: 'bench', VLT_LLM_MODEL: 'fake-chat' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    const chatUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve((JSON.parse(line) as { chat_url: string }).chat_url);
      });
      child.once('exit', (c) => reject(new Error(`vlt serve exited ${c}`)));
    });
    const page = await browser.newPage({ viewport: { width: 900, height: 1000 } });
    await page.goto(chatUrl);
    await page.waitForSelector('#input');

    const askAndWait = async (question: string): Promise<number> => {
      const before = await page.$$eval('.msg.assistant.done, .msg.assistant.error', (els) => els.length);
      await page.fill('#input', question);
      const t0 = Date.now();
      await page.press('#input', 'Enter');
      await page.waitForFunction((n) => document.querySelectorAll('.msg.assistant.done, .msg.assistant.error').length > n, before, { timeout: 60_000, polling: 'raf' });
      return Date.now() - t0;
    };

    // 1. The extractive brief: the model picker set to "none".
    await page.selectOption('#model', 'none');
    const questions = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'test/bench/oracle/questions.json'), 'utf8')) as Array<{ corpus: string; question: string; noAnswer: boolean }>).filter((q) => q.corpus === 'go' && !q.noAnswer);
    await askAndWait(questions[0]!.question); // warm: the index loads on the first question
    const brief: number[] = [];
    for (const q of questions) brief.push(await askAndWait(q.question));

    // 2. First token: the fake model's first content chunk → that text in the page.
    await page.selectOption('#model', 'configured');
    const firstToken: number[] = [];
    fake.chunkDelayMs = 5;
    for (let i = 0; i < 10; i++) {
      fake.script.chat.push(...Array.from({ length: 4 }, () => ({ content: `Marker${i} the server reads requests in conn.serve [net/http/server.go:1900].` })));
      await page.fill('#input', 'How does the HTTP server read a request?');
      await page.evaluate((marker) => {
        const w = window as unknown as { __seen?: number };
        delete w.__seen;
        const obs = new MutationObserver(() => {
          const answers = document.querySelectorAll('.msg.assistant .answer');
          if (answers[answers.length - 1]?.textContent?.includes(marker)) {
            w.__seen = Date.now();
            obs.disconnect();
          }
        });
        obs.observe(document.getElementById('log')!, { subtree: true, childList: true, characterData: true });
      }, `Marker${i}`);
      const before = await page.$$eval('.msg.assistant.done, .msg.assistant.error', (els) => els.length);
      await page.press('#input', 'Enter');
      await page.waitForFunction((n) => document.querySelectorAll('.msg.assistant.done, .msg.assistant.error').length > n, before, { timeout: 60_000 });
      const seen = await page.evaluate(() => (window as unknown as { __seen?: number }).__seen);
      const sent = fake.firstChunkAt;
      if (seen && sent) firstToken.push(seen - sent);
      fake.reset();
    }

    // 3. A 5,000-token answer streamed word by word: long tasks while it renders.
    const long = longAnswer(5000);
    fake.chunkDelayMs = 1;
    fake.script.chat.push(...Array.from({ length: 4 }, () => ({ content: long })));
    await page.evaluate(() => {
      const w = window as unknown as { __long: number[] };
      w.__long = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) w.__long.push(e.duration);
      }).observe({ type: 'longtask', buffered: false });
    });
    const streamMs = await askAndWait('How does the HTTP server read a request?');
    const longTasks = await page.evaluate(() => (window as unknown as { __long: number[] }).__long);
    const rendered = await page.$$eval('.msg.assistant .answer', (els) => els.at(-1)?.textContent?.length ?? 0);
    process.stdout.write(
      JSON.stringify({
        bundleBytes,
        brief: { n: brief.length, p50: pct(brief, 50), p95: pct(brief, 95), max: Math.max(...brief) },
        firstToken: { n: firstToken.length, p50: pct(firstToken, 50), p95: pct(firstToken, 95), max: Math.max(...firstToken) },
        long: { chars: long.length, renderedChars: rendered, streamMs, longTasks: longTasks.length, maxLongTaskMs: longTasks.length ? Math.max(...longTasks) : 0 },
      }),
    );
  } finally {
    await browser.close();
    child.kill('SIGTERM');
    await fake.close();
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
