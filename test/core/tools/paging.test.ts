/**
 * Paging on the tools that had none: read_file_range keeps to max_tokens and continues a range
 * with next_cursor; ask_oracle continues an answer cut to max_tokens from where it stopped,
 * without answering again.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/core/config';
import type { Engine } from '../../../src/core/engine';
import type { Oracle } from '../../../src/core/oracle/oracle';
import type { OracleAnswer } from '../../../src/core/oracle/types';
import { silentLogger } from '../../../src/core/ports';
import { invokeTool, type ToolContext } from '../../../src/core/tools/definitions';
import { askOracleTool, readFileRangeTool } from '../../../src/core/tools/oracle-tools';
import { nodeWorkspaceFs } from '../../../src/node/fs';

let ws: string;
let ctx: ToolContext;
const LINES = Array.from({ length: 300 }, (_, i) => `const value${i} = compute(${i}, 'a fairly long line of source code to take some room');`);

beforeAll(async () => {
  ws = mkdtempSync(path.join(tmpdir(), 'vlt-paging-'));
  writeFileSync(path.join(ws, 'big.ts'), `${LINES.join('\n')}\n`);
  writeFileSync(path.join(ws, 'wide.ts'), `${'x'.repeat(5000)}\nshort\n`);
  const config = await loadConfig(ws, {});
  ctx = { getEngine: () => Promise.resolve({ root: ws, config } as unknown as Engine), fs: nodeWorkspaceFs, logger: silentLogger };
});

afterAll(() => rmSync(ws, { recursive: true, force: true }));

async function ok<T>(p: Promise<{ ok: true; value: T } | { ok: false; error: { message: string } }>): Promise<T> {
  const r = await p;
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

describe('read_file_range pages', () => {
  it('keeps to max_tokens and reads the rest of the range page by page, each line once', async () => {
    const input = { path: 'big.ts', start_line: 1, end_line: 300, max_tokens: 1000 };
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await ok(invokeTool(readFileRangeTool, ctx, { ...input, ...(cursor ? { cursor } : {}) }));
      expect(JSON.stringify(page).length).toBeLessThanOrEqual(4000);
      seen.push(...page.text.split('\n').map((l) => l.replace(/^\s*\d+│ /, '')));
      cursor = page.next_cursor;
      if (cursor) expect(page.truncated).toBe(true);
      pages++;
    } while (cursor && pages < 50);
    expect(pages).toBeGreaterThan(5);
    expect(seen).toEqual(LINES);
  });

  it('answers a range that fits as before: no cursor, not truncated', async () => {
    const page = await ok(invokeTool(readFileRangeTool, ctx, { path: 'big.ts', start_line: 10, end_line: 12 }));
    expect(page).toMatchObject({ start_line: 10, end_line: 12, total_lines: 301 });
    expect(page.truncated).toBeUndefined();
    expect(page.next_cursor).toBeUndefined();
  });

  it('cuts a single line longer than the budget instead of repeating it forever, and refuses a cursor of another range', async () => {
    const first = await ok(invokeTool(readFileRangeTool, ctx, { path: 'wide.ts', start_line: 1, end_line: 2, max_tokens: 100 }));
    expect(first).toMatchObject({ start_line: 1, end_line: 1, truncated: true });
    expect(first.text.endsWith('…')).toBe(true);
    const second = await ok(invokeTool(readFileRangeTool, ctx, { path: 'wide.ts', start_line: 1, end_line: 2, max_tokens: 100, cursor: first.next_cursor }));
    expect(second.text).toMatch(/2│ short$/);
    const wrong = await invokeTool(readFileRangeTool, ctx, { path: 'big.ts', start_line: 1, end_line: 2, max_tokens: 100, cursor: first.next_cursor });
    expect(wrong).toMatchObject({ ok: false, error: { code: 'USAGE' } });
  });
});

describe('ask_oracle pages', () => {
  const longAnswer = Array.from({ length: 400 }, (_, i) => `- Point ${i}: the cache entry expires after its TTL [src/cache.ts:${i + 1}]`).join('\n');
  let asked = 0;
  const oracleCtx = (): ToolContext => ({
    ...ctx,
    getOracle: () =>
      Promise.resolve({
        ask: () => {
          asked++;
          const ans: OracleAnswer = {
            question: 'How does the cache expire?',
            type: 'conceptual',
            mode: 'extractive',
            answer: longAnswer,
            details: 'details '.repeat(500),
            noContext: false,
            citations: [{ citation: 'src/cache.ts:1', source: 'code', path: 'src/cache.ts', line: 1 }],
            files: ['src/cache.ts'],
          } as unknown as OracleAnswer;
          return Promise.resolve(ans);
        },
      } as unknown as Oracle),
  });

  it('continues an answer cut to max_tokens from where it stopped, without asking again', async () => {
    const c = oracleCtx();
    const question = 'How does the cache expire?';
    const first = await ok(invokeTool(askOracleTool, c, { question, max_tokens: 1000 }));
    expect(first.truncated).toBe(true);
    expect(first.details).toBeUndefined();
    expect(JSON.stringify(first).length).toBeLessThanOrEqual(4000);
    let text = first.answer;
    let cursor = first.next_cursor;
    let pages = 1;
    while (cursor && pages < 40) {
      const page = await ok(invokeTool(askOracleTool, c, { question, max_tokens: 1000, cursor }));
      expect(JSON.stringify(page).length).toBeLessThanOrEqual(4000);
      expect(page.files).toEqual(['src/cache.ts']);
      text += page.answer;
      cursor = page.next_cursor;
      pages++;
    }
    expect(text).toBe(longAnswer);
    expect(asked).toBe(1);

    const other = await invokeTool(askOracleTool, c, { question: 'Another question?', cursor: first.next_cursor });
    expect(other).toMatchObject({ ok: false, error: { code: 'USAGE' } });
    const unknown = await invokeTool(askOracleTool, c, { question, cursor: 'a1-000000000000-10' });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'USAGE', message: expect.stringContaining('no longer held') } });
  });
});
